package vmagent

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// OwnStdio takes this process's standard streams out of the tools' reach. The agent's
// protocol comes on stdin and goes out on stdout, and the tools run in this process: a
// read of /dev/stdin or /proc/self/fd/0 would take the next requests off the channel,
// and a write to /dev/stdout would put bytes into it. OwnStdio returns the three streams
// as new descriptors (close-on-exec, so no command inherits them) and puts /dev/null
// at 0, 1 and 2, which is what those paths then open: what pi's tools find when pi has
// no terminal.
func OwnStdio() (in, out, errw *os.File, err error) {
	if err := SealInherited(); err != nil {
		return nil, nil, nil, err
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("opening %s for the standard streams: %w", os.DevNull, err)
	}
	defer null.Close()
	files := make([]*os.File, 3)
	for fd, name := range []string{"stdin", "stdout", "stderr"} {
		moved, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 3)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("moving the agent's %s: %w", name, err)
		}
		files[fd] = os.NewFile(uintptr(moved), "agent-"+name)
	}
	for fd := range 3 {
		if err := unix.Dup3(int(null.Fd()), fd, 0); err != nil {
			return nil, nil, nil, fmt.Errorf("putting %s at descriptor %d: %w", os.DevNull, fd, err)
		}
	}
	return files[0], files[1], files[2], nil
}

// SealInherited marks close-on-exec every descriptor above 2 that this process was
// started with (whatever sbx exec or the parent left open without the flag), so that
// the commands the tools run get exactly their own 0, 1 and 2 — and SIGHUP's default
// action (hangupDefault).
func SealInherited() error {
	hangupDefault()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("listing the agent's descriptors: %w", err)
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		// The directory ReadDir read is closed by now: EBADF is no error.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && err != unix.EBADF {
			return fmt.Errorf("sealing descriptor %d: %w", fd, err)
		}
	}
	return nil
}

// hangupDefault gives the commands this process starts SIGHUP's default action even when
// this process was started with it ignored (under nohup, or by a parent that ignores
// it): an ignored signal stays ignored across exec, a caught one does not. A terminal
// session's shell must end when its terminal hangs up — when the agent holding the
// terminal died. This process itself goes on ignoring it (the signals are dropped).
func hangupDefault() {
	if signal.Ignored(syscall.SIGHUP) {
		signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP)
	}
}
