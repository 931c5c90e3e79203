package mcpserver

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipeSize is the buffer GrowPipe asks for: a 30 MB message crosses in 30 wake-ups of
// the reader instead of 480 (the default 64 KB).
const pipeSize = 1 << 20

// GrowPipe enlarges the buffer of the pipe f is an end of. Best effort: only speed
// depends on it (an unprivileged process may not exceed /proc/sys/fs/pipe-max-size),
// and anything that is not a pipe (a socket, a terminal) is left as it is.
func GrowPipe(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	// Through the raw descriptor: f.Fd() would put the file in blocking mode.
	_ = rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO {
			_, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize)
		}
	})
}
