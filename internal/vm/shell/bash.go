// Package shell runs commands as pi 1.6.0's bash tool does (process group, timeout,
// tail truncation, full-output file) and under pseudo-terminals. It knows nothing of
// sandboxes or protocols.
package shell

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/js"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/truncate"
)

// pi's constants (bash.ts, child-process.ts, renderers/bash.ts).
const (
	maxTimeoutMs   = 2_147_483_647
	exitStdioGrace = 100 * time.Millisecond // wait for pipes after the shell exits, re-armed per chunk
	updateThrottle = 100 * time.Millisecond // at most one OnUpdate/OnProgress per interval
	progressMax    = 64 << 10               // Progress.Text keeps at most this much of the newest output
	readChunk      = 256 << 10
	pipeSize       = 1 << 20 // a larger pipe means fewer wake-ups for fast writers
)

// BashArgs are bash's arguments.
type BashArgs struct {
	Command string   `json:"command"`
	Timeout *float64 `json:"timeout,omitempty"`
}

// BashOptions carry what is not an argument.
type BashOptions struct {
	Env []string // extra KEY=VALUE variables (pi's PI_*); a later KEY wins
	// OnUpdate receives pi's partial results (the tail so far), throttled to one per
	// 100 ms; may be nil. It runs on Bash's goroutine, so it should not block.
	OnUpdate func(result.Result)
	// OnProgress receives, at the same moments, what arrived since the previous call —
	// for protocols that forward output as it comes; may be nil.
	OnProgress func(Progress)
	// TempDir is where the full-output file goes; "" means Node's os.tmpdir() ($TMPDIR,
	// $TMP, $TEMP, /tmp), as pi.
	TempDir string

	// exitStdioGrace replaces the package's exitStdioGrace when set: tests that need
	// a quiet pipe to keep the call running set it long, so that the scheduler's
	// pauses cannot end the call early.
	exitStdioGrace time.Duration
}

// Progress is output that arrived since the previous progress call.
type Progress struct {
	Text  string // the new output, decoded as UTF-8; only its last 64KB if there was more
	Bytes int    // raw bytes of output so far
}

// BashDetails is bash's details object: present only when the output was truncated.
type BashDetails struct {
	Truncation     *truncate.Result `json:"truncation,omitempty"`
	FullOutputPath string           `json:"fullOutputPath,omitempty"`
}

// Bash is pi's bash tool: it runs command with `bash -c` in cwd, stdout and stderr in
// one pipe, and returns the tail of the output. A non-zero exit is a result with
// IsError; timeout, abort (ctx cancelled) and invalid arguments are returned errors —
// pi throws them, and its agent loop shows the message to the model.
func Bash(ctx context.Context, cwd string, a BashArgs, o BashOptions) (result.Result, error) {
	if o.OnUpdate != nil {
		o.OnUpdate(result.Result{Content: []result.Content{}})
	}
	timeout, err := resolveTimeout(a.Timeout)
	if err != nil {
		return result.Result{}, err
	}
	if ctx.Err() != nil {
		return result.Result{}, errors.New("Command aborted")
	}
	if unix.Access(cwd, unix.F_OK) != nil {
		return result.Result{}, fmt.Errorf("Working directory does not exist: %s\nCannot execute bash commands.", cwd)
	}
	if strings.IndexByte(a.Command, 0) >= 0 {
		// Node's spawn refuses it before starting anything: pi runs [shell, "-c", command].
		return result.Result{}, errors.New(js.InvalidArgValue("args[1]", a.Command, "must be a string without null bytes"))
	}
	dir := o.TempDir
	if dir == "" {
		dir = tmpDir()
	}
	r := &run{out: newOutput(dir, "pi-bash"), onUpdate: o.OnUpdate, onProgress: o.OnProgress, exitGrace: exitStdioGrace}
	if o.exitStdioGrace > 0 {
		r.exitGrace = o.exitStdioGrace
	}
	if o.OnProgress != nil {
		r.out.freshMax = progressMax
	}
	end, err := r.exec(ctx, a.Command, cwd, timeout, withGitConfig(append(baseEnv(), o.Env...)))
	if err != nil {
		return result.Result{}, err
	}
	r.out.finish()
	r.emit()
	snap := r.out.snapshot(true)
	if err := r.out.close(); err != nil {
		// The full-output file could not be written (a full disk): the command's output
		// and exit status still stand, and the notice says what was not saved. The
		// partial file goes, so that it neither passes for the full output nor keeps
		// the room.
		if snap.path != "" {
			os.Remove(snap.path)
		}
		snap.path, snap.saveErr = "", err
	}
	return format(snap, r.out.lineBytes, end, a.Timeout)
}

// isSessionVar tells pi's session variables: pi never lets a command inherit them from
// its own environment, only sets them from the session (here: BashOptions.Env).
func isSessionVar(key string) bool {
	switch key {
	case "PI_SESSION_ID", "PI_SESSION_FILE", "PI_PROVIDER", "PI_MODEL", "PI_REASONING_LEVEL":
		return true
	}
	return false
}

// baseEnv is the process's environment without pi's session variables.
func baseEnv() []string {
	env := os.Environ()
	out := env[:0]
	for _, kv := range env {
		key, _, _ := strings.Cut(kv, "=")
		if !isSessionVar(key) {
			out = append(out, kv)
		}
	}
	return out
}

// resolveTimeout checks the model's timeout as pi does; 0 means none.
func resolveTimeout(t *float64) (time.Duration, error) {
	if t == nil {
		return 0, nil
	}
	if math.IsInf(*t, 0) || math.IsNaN(*t) || *t <= 0 {
		return 0, errors.New("Invalid timeout: must be a finite number of seconds")
	}
	ms := *t * 1000
	if ms > maxTimeoutMs {
		return 0, fmt.Errorf("Invalid timeout: maximum is %s seconds", js.String(maxTimeoutMs/1000.0))
	}
	// Node's setTimeout runs delays under 1 ms after 1 ms.
	return max(time.Duration(ms*float64(time.Millisecond)), time.Millisecond), nil
}

// ending is how a run ended.
type ending struct {
	code     int
	hasCode  bool
	aborted  bool
	timedOut bool
	// shellExited: the shell had exited before the timeout fired, and background
	// processes kept the pipe busy; then code and exitedAfter describe the shell.
	shellExited bool
	exitedAfter time.Duration
}

// run is one command's lifetime: it owns the output and the update throttle, and is
// only touched by the goroutine running exec (like pi's single event loop).
type run struct {
	out        *output
	onUpdate   func(result.Result)
	onProgress func(Progress)
	dirty      bool
	lastUpdate time.Time
	exitGrace  time.Duration // how long a quiet pipe is waited for after the shell exits
}

// exec starts the shell and runs the event loop until the command has ended: the shell
// has exited and its pipe has closed or been quiet for exitStdioGrace.
func (r *run) exec(ctx context.Context, command, cwd string, timeout time.Duration, env []string) (ending, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return ending{}, fmt.Errorf("creating output pipe: %w", err)
	}
	defer pr.Close()
	growPipe(pw)
	cmd := exec.Command(shellPath(), "-c", command)
	cmd.Dir, cmd.Env = cwd, env
	cmd.Stdout, cmd.Stderr = pw, pw // one pipe: arrival order is exact
	// A new session, as pi's detached spawn: the command leads its own process group
	// (killed as a whole) and has no controlling terminal, so reading /dev/tty or a
	// credential prompt fails at once rather than waiting on the server's terminal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	started := time.Now()
	err = cmd.Start()
	pw.Close()
	if err != nil {
		return ending{}, spawnError(cmd.Path, err)
	}
	pid := cmd.Process.Pid

	exited := make(chan *os.ProcessState, 1)
	go func() {
		ps, _ := cmd.Process.Wait() // a wait error still leaves ps nil; handled below
		exited <- ps
	}()
	rd := startReader(pr)

	var (
		end                ending
		state              *os.ProcessState
		shellDone, pipeEnd bool
		exitedAfter        time.Duration
		grace, deadline    <-chan time.Time
		graceTimer         *time.Timer
		update             *time.Timer
		updateC            <-chan time.Time
		done               = ctx.Done()
	)
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	armGrace := func() {
		if graceTimer == nil {
			graceTimer = time.NewTimer(r.exitGrace)
			grace = graceTimer.C
			return
		}
		graceTimer.Reset(r.exitGrace)
	}
	defer func() {
		if graceTimer != nil {
			graceTimer.Stop()
		}
		if update != nil {
			update.Stop()
		}
	}()
	for !(shellDone && pipeEnd) {
		select {
		case b, ok := <-rd.chunks:
			if !ok {
				pipeEnd = true
				continue
			}
			r.out.append(b)
			rd.release(b)
			if shellDone {
				armGrace()
			}
			if r.onUpdate == nil && r.onProgress == nil {
				continue
			}
			r.dirty = true
			if wait := updateThrottle - time.Since(r.lastUpdate); wait <= 0 {
				if update != nil {
					update.Stop()
				}
				updateC = nil
				r.emit()
			} else if updateC == nil {
				update = time.NewTimer(wait)
				updateC = update.C
			}
		case <-updateC:
			updateC = nil
			r.emit()
		case state = <-exited:
			shellDone, exitedAfter = true, time.Since(started)
			if !pipeEnd {
				armGrace()
			}
		case <-grace:
			if rd.pending() > 0 {
				armGrace() // not quiet: output is waiting for the reader, which runs late
				continue
			}
			pipeEnd = true // background processes hold the pipe; pi stops reading here
		case <-deadline:
			deadline = nil
			end.timedOut = true
			if shellDone {
				end.shellExited, end.exitedAfter = true, exitedAfter
			}
			killSessionGroup(pid) // also after the shell exited: its background jobs are in the group
		case <-done:
			done = nil
			killSessionGroup(pid)
		}
	}
	// Whatever reached the pipe and was not read yet is output all the same.
	rest, err := rd.drain()
	if len(rest) > 0 {
		r.out.append(rest)
		r.dirty = r.onUpdate != nil || r.onProgress != nil
	}
	if err != nil {
		return ending{}, err
	}
	end.aborted = ctx.Err() != nil
	if state != nil {
		end.code, end.hasCode = exitCode(state)
	}
	return end, nil
}

// spawnError words a failed start as Node's spawn does, since pi throws that error:
// "spawn /bin/bash ENOENT" for the errors Node reports asynchronously, "spawn ENOTDIR"
// for the ones it throws.
func spawnError(shell string, err error) error {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return fmt.Errorf("spawn %s: %w", shell, err)
	}
	name := unix.ErrnoName(errno)
	switch errno {
	case syscall.EACCES, syscall.EAGAIN, syscall.EMFILE, syscall.ENFILE, syscall.ENOENT:
		return fmt.Errorf("spawn %s %s", shell, name)
	}
	return fmt.Errorf("spawn %s", name)
}

// emit sends a throttled partial result if output arrived since the last one.
func (r *run) emit() {
	if !r.dirty {
		return
	}
	r.dirty = false
	r.lastUpdate = time.Now()
	if r.onProgress != nil {
		r.onProgress(Progress{Text: string(r.out.takeFresh()), Bytes: r.out.totalRaw})
	}
	if r.onUpdate == nil {
		return
	}
	snap := r.out.snapshot(true)
	d := BashDetails{FullOutputPath: snap.path}
	if snap.truncation.Truncated {
		d.Truncation = &snap.truncation
	}
	r.onUpdate(result.Result{Content: []result.Content{result.TextBlock(snap.truncation.Content)}, Details: d})
}
