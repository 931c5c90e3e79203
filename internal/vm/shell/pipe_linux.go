package shell

import (
	"os"

	"golang.org/x/sys/unix"
)

// fionread is the ioctl that tells how many bytes a pipe holds (FIONREAD is TIOCINQ).
const fionread = unix.TIOCINQ

// growPipe enlarges the pipe: fewer wake-ups for fast writers. Best effort: only speed.
func growPipe(w *os.File) {
	_, _ = unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, pipeSize)
}
