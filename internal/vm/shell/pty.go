package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// PtyOptions describe a command to run under a pseudo-terminal.
type PtyOptions struct {
	Dir        string   // working directory; "" means the current one
	Env        []string // added to the process's environment; a later KEY wins
	Cols, Rows uint16   // initial window size; 0 means 80×24
	// NoInput makes stdin /dev/null while stdout and stderr stay on the terminal, which
	// remains the controlling one (so resizes still signal SIGWINCH): for a command that
	// nobody will ever type into, a read ends at once instead of waiting forever.
	NoInput bool
}

// Pty is a command running under a pseudo-terminal of its own: a new session whose
// controlling terminal is the pty. It is an io.ReadWriter: writes are terminal input,
// reads are terminal output, and the end of output reads as io.EOF.
type Pty struct {
	cmd    *exec.Cmd
	master *os.File
	done   chan struct{}
	code   int
	err    error
	close  sync.Once
}

// StartPty starts argv under a new pseudo-terminal. Cancelling ctx kills the command's
// process group.
func StartPty(ctx context.Context, argv []string, o PtyOptions) (*Pty, error) {
	// Not CommandContext's cancel: ctx kills the whole group (below), not only the leader.
	cmd, err := command(context.Background(), "pty", argv, o.Dir, o.Env)
	if err != nil {
		return nil, err
	}
	master, tty, err := openPty()
	if err != nil {
		return nil, err
	}
	p := &Pty{master: master, done: make(chan struct{})}
	if o.Cols == 0 || o.Rows == 0 {
		o.Cols, o.Rows = 80, 24
	}
	if err := p.Resize(o.Cols, o.Rows); err != nil {
		master.Close()
		tty.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	ctty := 0 // the child's fd holding the terminal
	if o.NoInput {
		cmd.Stdin, ctty = nil, 1 // exec gives a nil Stdin /dev/null
	}
	// A new session with the pty as controlling terminal: job control, ^C and SIGWINCH
	// then work as in a real terminal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: ctty}
	err = cmd.Start()
	tty.Close() // the child has its copy; EIO on the master then marks its end
	if err != nil {
		master.Close()
		return nil, fmt.Errorf("pty: starting %s: %w", argv[0], err)
	}
	p.cmd = cmd
	go p.wait(ctx)
	return p, nil
}

// openPty opens a pty pair with a master the Go poller manages, so that Close
// interrupts a blocked Read (creack/pty leaves its master in blocking mode).
func openPty() (master, tty *os.File, err error) {
	m, tty, err := pty.Open()
	if err != nil {
		return nil, nil, fmt.Errorf("pty: opening: %w", err)
	}
	defer m.Close()
	// Close-on-exec in the same call: a command another goroutine starts between a
	// plain dup and setting the flag would inherit the master and hold the terminal.
	fd, err := unix.FcntlInt(m.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err == nil {
		err = unix.SetNonblock(fd, true)
	}
	if err != nil {
		tty.Close()
		return nil, nil, fmt.Errorf("pty: preparing master: %w", err)
	}
	return os.NewFile(uintptr(fd), m.Name()), tty, nil
}

func (p *Pty) wait(ctx context.Context) {
	exited := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			killGroup(p.cmd.Process.Pid)
		case <-exited:
		}
	}()
	err := p.cmd.Wait()
	close(exited)
	if p.cmd.ProcessState != nil {
		var ok bool
		if p.code, ok = exitCode(p.cmd.ProcessState); ok {
			err = nil
		}
	}
	p.err = err
	close(p.done)
}

// Read reads terminal output. After the command and everything else holding the
// terminal have gone, Linux reports EIO; Read turns that into io.EOF.
func (p *Pty) Read(b []byte) (int, error) {
	n, err := p.master.Read(b)
	if errors.Is(err, syscall.EIO) || errors.Is(err, os.ErrClosed) {
		err = io.EOF
	}
	return n, err
}

// Pending is how many bytes of output wait unread (0 if that cannot be known). Output
// the kernel has not yet moved into the terminal's queue is not counted: only the end of
// the output (Read's io.EOF) is sure to come after every byte.
func (p *Pty) Pending() int { return unreadBytes(p.master) }

// Write sends terminal input, as if typed.
func (p *Pty) Write(b []byte) (int, error) { return p.master.Write(b) }

// Resize sets the window size; the kernel signals SIGWINCH to the foreground job.
func (p *Pty) Resize(cols, rows uint16) error {
	return p.control("resize", func(fd int) error {
		return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Col: cols, Row: rows})
	})
}

// Signal sends sig to the terminal's foreground process group — whoever would get it
// from a key such as ^C — or to the command itself if that cannot be found.
func (p *Pty) Signal(sig syscall.Signal) error {
	var pgrp int
	err := p.control("signal", func(fd int) error {
		var err error
		pgrp, err = unix.IoctlGetInt(fd, unix.TIOCGPGRP)
		return err
	})
	if err == nil && pgrp > 0 {
		if err = syscall.Kill(-pgrp, sig); err == nil {
			return nil
		}
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("pty: signal %v: %w", sig, err)
	}
	return nil
}

// Done is closed when the command has exited.
func (p *Pty) Done() <-chan struct{} { return p.done }

// Wait waits for the command and returns its exit code (128 + n for a death by
// signal n).
func (p *Pty) Wait() (int, error) {
	<-p.done
	return p.code, p.err
}

// Close ends the session: it kills the command's process group if it still runs,
// closes the terminal and waits for the command.
func (p *Pty) Close() error {
	p.close.Do(func() {
		select {
		case <-p.done:
		default:
			killGroup(p.cmd.Process.Pid)
		}
		p.master.Close()
		<-p.done
	})
	return nil
}

// control runs f on the master's descriptor without taking it out of the poller.
func (p *Pty) control(what string, f func(fd int) error) error {
	rc, err := p.master.SyscallConn()
	if err != nil {
		return fmt.Errorf("pty: %s: %w", what, err)
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		return fmt.Errorf("pty: %s: %w", what, err)
	}
	if ferr != nil {
		return fmt.Errorf("pty: %s: %w", what, ferr)
	}
	return nil
}
