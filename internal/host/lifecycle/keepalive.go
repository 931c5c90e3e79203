package lifecycle

import (
	"os"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// Real sbx stops a local sandbox about 30 s after its last session ends (SBX#452), and a
// stop ends every process in it. A serve session must not lose what it started between
// two calls — the per-call transport has no session between calls, docker_run's
// detached containers and published ports live in the VM, a pinned or re-used
// sandbox is the user's — so while a Session with KeepAlive is open, it holds one
// session of its own in the sandbox: `sbx exec -i SANDBOX -- sh -c 'cat >/dev/null'`
// with stdin a pipe only this process writes to. When this process ends, even by
// kill -9, the pipe closes, cat exits, and sbx's own auto-stop applies again. It runs
// in / (sbx's default is the workspace): a process whose working directory is in the
// workspace is named as holding it before an undo.

// keepAliveCommand waits for the end of its stdin and prints nothing.
var keepAliveCommand = []string{"sh", "-c", "exec cat >/dev/null"}

// keepAliveRetry bounds how often a keep-alive that ended is started again.
const keepAliveRetry = 2 * time.Second

// keepAlive is one running keep-alive exec.
type keepAlive struct {
	stdin   *os.File // the write end; closing it ends the exec
	done    chan struct{}
	started time.Time
}

func (k *keepAlive) alive() bool {
	select {
	case <-k.done:
		return false
	default:
		return true
	}
}

// holdOpenLocked (s.mu held) makes sure the keep-alive runs: after a stop of the
// sandbox (by sbx stop, a daemon restart, a reboot) it ended with it, and starting it
// again starts the sandbox again.
func (s *Session) holdOpenLocked() {
	if !s.KeepAlive || s.closed {
		return
	}
	if k := s.keep; k != nil && (k.alive() || time.Since(k.started) < keepAliveRetry) {
		return
	}
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	started, err := s.Client.StartExec(s.lifeLocked(), s.Name, keepAliveCommand, sbx.ExecOpts{Interactive: true, Stdin: r, Workdir: "/"})
	r.Close()
	k := &keepAlive{stdin: w, done: make(chan struct{}), started: time.Now()}
	if err != nil {
		w.Close()
		close(k.done)
		s.keep = k
		return
	}
	go func() {
		_ = started.Wait()
		close(k.done)
	}()
	s.keep = k
}

// releaseLocked (s.mu held) ends the keep-alive.
func (s *Session) releaseLocked() {
	if s.keep != nil {
		s.keep.stdin.Close()
		s.keep = nil
	}
}

// KeepAliveRunning reports whether the session holds the sandbox open right now.
func (s *Session) KeepAliveRunning() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keep != nil && s.keep.alive()
}
