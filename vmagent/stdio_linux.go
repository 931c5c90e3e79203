package vmagent

import (
	"fmt"
	"os"

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
