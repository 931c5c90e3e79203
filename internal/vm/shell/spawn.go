package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// SpawnOptions describe a command started by Spawn.
type SpawnOptions struct {
	Dir string   // working directory; "" means the current one
	Env []string // added to the process's environment; a later KEY wins
}

// Process is a command started by Spawn: the leader of a session (and process group) of
// its own, with stdin at /dev/null and stdout and stderr on one pipe.
type Process struct {
	cmd  *exec.Cmd
	out  *os.File
	done chan struct{}
	code int
	err  error
}

// Spawn starts argv in a new session with its input at end-of-file (/dev/null: a read
// returns at once instead of waiting for a terminal nobody types into) and its output on
// a pipe the caller reads with Output. Unlike exec.Cmd with an io.Writer, waiting for the
// exit never waits for that pipe: a background process that keeps it open does not hold
// back the exit status. The command is killed when the process that spawned it dies
// (Linux's parent-death signal), so a session nobody can name any more does not live on.
func Spawn(argv []string, o SpawnOptions) (*Process, error) {
	cmd, err := command(context.Background(), "spawn", argv, o.Dir, o.Env)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("spawn: output pipe: %w", err)
	}
	cmd.Stdout, cmd.Stderr = w, w // *os.File: handed to the child, no copying goroutine
	cmd.SysProcAttr = spawnAttr()
	err = cmd.Start()
	w.Close() // the child has its copy; EOF on r then marks the end of every writer
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("spawn %s: %w", argv[0], err)
	}
	p := &Process{cmd: cmd, out: r, done: make(chan struct{})}
	go p.wait()
	return p, nil
}

func (p *Process) wait() {
	err := p.cmd.Wait()
	if code, ok := exitCode(p.cmd.ProcessState); ok {
		p.code, err = code, nil
	}
	p.err = err
	close(p.done)
}

// Pid is the command's process id, which is also its process group's and session's.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Output is the read end of the command's stdout and stderr. It reads io.EOF once every
// process holding the write end (the command and whatever it left running) has closed it.
func (p *Process) Output() io.ReadCloser { return p.out }

// Done is closed when the command has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the command and returns its exit code (128 + n for a death by signal n).
func (p *Process) Wait() (int, error) {
	<-p.done
	return p.code, p.err
}

// Signal sends sig to the command's process group: the command and everything it started
// that stayed in the group, even after the command itself has exited.
func (p *Process) Signal(sig syscall.Signal) error {
	return SignalGroup(p.Pid(), sig)
}

// SignalGroup sends sig to the process group pgid. A group with no process left is no
// error: what was to be signalled is gone.
func SignalGroup(pgid int, sig syscall.Signal) error {
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %v to process group %d: %w", sig, pgid, err)
	}
	return nil
}

// GroupEmpty reports whether no process is left in the process group pgid. Once the
// group's leader has been reaped its number may be reused, so a true answer is sure and
// a false one is not.
func GroupEmpty(pgid int) bool {
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

// EOFWait bounds the wait for the end of an exited command's output once its process
// group is empty: something outside the group (a daemon that kept the terminal or pipe)
// may still hold it.
const EOFWait = 2 * time.Second

// OutputOver decides, when an exited command's output has been quiet for a grace, whether
// it can be taken to have ended although nothing reported its end: a background process
// may hold it open for ever. unread is what waits unread in the pipe or terminal;
// sinceExit is how long ago the command exited. While the command's process group is
// empty nothing of its own holds the output, so its end (reported only after the last
// byte) is worth waiting for, up to EOFWait, however late a loaded machine runs the
// reader; otherwise a quiet output with nothing unread has ended. (A grace alone lost a
// command's last line when 120 terminal sessions ended at once on two cores.)
func OutputOver(pgid, unread int, sinceExit time.Duration) bool {
	return unread == 0 && (!GroupEmpty(pgid) || sinceExit >= EOFWait)
}

// Pending is how many bytes of output wait unread in the command's pipe (0 if that
// cannot be known).
func (p *Process) Pending() int { return unreadBytes(p.out) }

// Path is the shell commands run with, chosen as pi chooses it: /bin/bash if it exists,
// else bash on PATH, else sh.
func Path() string { return shellPath() }

// SetWriteDeadline bounds how long a Write waits for the program to read its input
// (the terminal buffers only a few KB); the zero time means no bound.
func (p *Pty) SetWriteDeadline(t time.Time) error { return p.master.SetWriteDeadline(t) }

// Pgid is the process group of the command under the pseudo-terminal (the leader of
// its session).
func (p *Pty) Pgid() int { return p.cmd.Process.Pid }

// UTF8Stream decodes a byte stream into UTF-8 text the way JavaScript's streaming
// TextDecoder does: a character split across two chunks waits for the second, invalid
// bytes become U+FFFD.
type UTF8Stream struct{ d utf8Decoder }

// Decode returns the text of the next chunk.
func (s *UTF8Stream) Decode(p []byte) string { return string(s.d.decode(p)) }

// Flush ends the stream: an unfinished character becomes U+FFFD.
func (s *UTF8Stream) Flush() string { return string(s.d.flush()) }

// SpawnDetached starts argv as a daemon: in a session of its own, with stdin, stdout and
// stderr at /dev/null, not waited for and not killed with this process (a server that
// later invocations of this program talk to).
func SpawnDetached(argv []string, o SpawnOptions) error {
	cmd, err := command(context.Background(), "spawn", argv, o.Dir, o.Env)
	if err != nil {
		return err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("spawn %s: %w", argv[0], err)
	}
	// Reaped by whoever inherits it once this process exits; until then, by us.
	go func() { _ = cmd.Wait() }()
	return nil
}
