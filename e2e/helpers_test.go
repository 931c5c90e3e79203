//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	goexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/agentlink"
)

func command(bin string, env []string, args ...string) *goexec.Cmd {
	cmd := goexec.Command(bin, args...)
	cmd.Env = env
	return cmd
}

func exitCode(err error) int {
	var ee *goexec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func stderrOf(err error) string {
	var ee *goexec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

// rawServe starts serve in dir and connects the project's own small MCP client
// (agentlink.Client), which reads results without decoding them: what is timed is serve
// and the sandbox, not a client's decoding (the Go SDK's client spent more CPU per call
// than serve did).
func rawServe(b testing.TB, w *world, dir string) *agentlink.Client {
	p := w.startServe(b, dir, []string{"--cwd", dir})
	c, err := agentlink.Dial(context.Background(), p.stdout, p.stdin, p.stdin, agentlink.ClientOptions{Name: "bench", MaxLine: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

// findAgent returns the pid of the in-VM agent process (`…/pi-sbx-agent-… agent`) of the
// one sandbox in w's state, found among that sandbox's processes (those in its PID
// namespace): other tests' sandboxes and agents on the machine never count.
func findAgent(b testing.TB, w *world) int {
	b.Helper()
	states, _ := filepath.Glob(filepath.Join(w.state, "sandboxes", "*", "state.json"))
	if len(states) != 1 {
		b.Fatalf("want one sandbox in %s, have %d", w.state, len(states))
	}
	data, err := os.ReadFile(states[0])
	if err != nil {
		b.Fatal(err)
	}
	var st struct {
		Init struct {
			Pid int `json:"pid"`
		} `json:"init"`
	}
	if err := json.Unmarshal(data, &st); err != nil || st.Init.Pid == 0 {
		b.Fatalf("%s: no init process (%v)", states[0], err)
	}
	// sbx exec enters the sandbox's namespaces (nsenter): its processes are not the
	// init's children, but they share its PID namespace, which names the sandbox.
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", st.Init.Pid))
	if err != nil {
		b.Fatal(err)
	}
	found := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if theirs, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid)); theirs != ns {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		argv := strings.Split(string(cmdline), "\x00")
		if len(argv) > 1 && strings.Contains(argv[0], "pi-sbx-agent-") && argv[1] == "agent" {
			if found != 0 {
				b.Fatal("more than one agent process runs in the sandbox")
			}
			found = pid
		}
	}
	if found == 0 {
		b.Fatal("no agent process in the sandbox")
	}
	return found
}

// sandboxProc is a process of a sandbox held by a pidfd on the host: its end is seen the
// moment the kernel ends it, zombie or reaped. Asking the sandbox instead (sbx exec …
// kill -0) costs an exec whose time grows with the machine's load, past any deadline
// set for the process's death.
type sandboxProc struct {
	fd    int
	nsPid int
}

// sandboxProc opens the process that has pid nsPid in box's PID namespace, found among
// that namespace's processes on the host (other sandboxes' never count).
func (w *world) sandboxProc(t testing.TB, box string, nsPid int) *sandboxProc {
	t.Helper()
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", w.sims.InitPid(box)))
	require.NoError(t, err)
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !inPidNS(pid, ns) || innermostPid(pid) != nsPid {
			continue
		}
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil || !inPidNS(pid, ns) { // gone, or the pid was reused before the open
			continue
		}
		p := &sandboxProc{fd: fd, nsPid: nsPid}
		t.Cleanup(func() { unix.Close(fd) })
		return p
	}
	t.Fatalf("no process %d in sandbox %s", nsPid, box)
	return nil
}

func inPidNS(pid int, ns string) bool {
	theirs, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid))
	return err == nil && theirs == ns
}

// innermostPid is pid's number in its own PID namespace (the last of status's NSpid).
func innermostPid(pid int) int {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(rest)
			n, _ := strconv.Atoi(f[len(f)-1])
			return n
		}
	}
	return 0
}

// exitedWithin reports whether the process has ended, waiting at most d for it.
func (p *sandboxProc) exitedWithin(t testing.TB, d time.Duration) bool {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		fds := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(max(0, time.Until(deadline).Milliseconds()))) // < 0 would wait forever
		if err == unix.EINTR {
			continue
		}
		require.NoError(t, err)
		return n > 0
	}
}

// alive reports whether the process still runs.
func (p *sandboxProc) alive(t testing.TB) bool { return !p.exitedWithin(t, 0) }

// waitExit fails the test unless the process ends: the bound only keeps a broken build
// from hanging the suite, since the end is an event seen as it happens.
func (p *sandboxProc) waitExit(t testing.TB, msg string) {
	t.Helper()
	assert.True(t, p.exitedWithin(t, time.Minute), "pid %d in the sandbox did not end: %s", p.nsPid, msg)
}
