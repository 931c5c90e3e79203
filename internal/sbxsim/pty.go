//go:build linux

package sbxsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// execPty runs nsenter (and so the command) on a new pseudo-terminal of the sandbox's
// own devpts (so that the command finds its terminal in the sandbox's /dev/pts) and
// relays it: the command gets a terminal whether or not the caller has one (exec -t).
// With interactive, the caller's stdin is copied in; a caller on a terminal is put in raw
// mode and its window size follows.
func (c *cli) execPty(ctx context.Context, initPid int, nsenter string, argv, env []string, interactive bool) error {
	cmd := exec.CommandContext(ctx, nsenter, argv[1:]...)
	cmd.Env = env
	size := &pty.Winsize{Rows: 24, Cols: 80}
	in := c.env.Stdin
	onTerm := in != nil && term.IsTerminal(int(in.Fd()))
	if onTerm {
		if s, err := pty.GetsizeFull(in); err == nil {
			size = s
		}
	}
	master, err := startOnSandboxPty(cmd, initPid, size)
	if err != nil {
		return err
	}
	defer master.Close()
	if onTerm && interactive {
		if old, err := term.MakeRaw(int(in.Fd())); err == nil {
			defer func() { _ = term.Restore(int(in.Fd()), old) }()
		}
		winch := make(chan os.Signal, 1)
		signal.Notify(winch, syscall.SIGWINCH)
		defer signal.Stop(winch)
		go func() {
			for range winch {
				_ = pty.InheritSize(in, master)
			}
		}()
	}
	if interactive && in != nil {
		go func() { _, _ = io.Copy(master, in) }()
	}
	done := make(chan struct{})
	go func() {
		// Reading ends with EIO once every holder of the terminal's other end is gone.
		_, _ = io.Copy(c.env.Stdout, master)
		close(done)
	}()
	err = cmd.Wait()
	// A background process may keep the terminal open after the command is gone: what
	// the command wrote is read at once, but the rest is not waited for indefinitely
	// (docker exec -t returns too). The bound is generous for a loaded machine.
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		master.Close()
		<-done
	}
	return exitStatus(err)
}

// startOnSandboxPty opens a pseudo-terminal pair on the devpts instance of the sandbox
// whose init is initPid, through /proc/<pid>/root, and starts cmd on its terminal end as
// the session leader it controls; it returns the master.
func startOnSandboxPty(cmd *exec.Cmd, initPid int, size *pty.Winsize) (*os.File, error) {
	ptmx := fmt.Sprintf("/proc/%d/root/dev/pts/ptmx", initPid)
	mfd, err := unix.Open(ptmx, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the sandbox's terminal: %w", err)
	}
	master := os.NewFile(uintptr(mfd), "ptmx")
	if err := unix.IoctlSetPointerInt(mfd, unix.TIOCSPTLCK, 0); err != nil {
		master.Close()
		return nil, fmt.Errorf("unlocking the sandbox's terminal: %w", err)
	}
	// TIOCGPTPEER opens the terminal end with the open(2) flags given as its argument.
	sfd, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(mfd), unix.TIOCGPTPEER, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC)
	if errno != 0 {
		master.Close()
		return nil, fmt.Errorf("opening the sandbox's terminal: %w", errno)
	}
	tty := os.NewFile(sfd, "pts")
	defer tty.Close()
	if err := pty.Setsize(master, size); err != nil {
		master.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		master.Close()
		return nil, err
	}
	return master, nil
}

// exitStatus turns nsenter's end into sbxsim's: its exit status, or 128+n when it died
// of signal n (as the command did).
func exitStatus(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return exitCode(128 + int(ws.Signal()))
		}
		return exitCode(ee.ExitCode())
	}
	return err
}
