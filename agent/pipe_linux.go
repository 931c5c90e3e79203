package agent

import (
	"os"

	"golang.org/x/sys/unix"
)

// channelPipeSize is the buffer of the agent channel's pipes: a 30 MB write crosses in
// 30 wake-ups of the reader instead of 480 (the default 64 KB), which on a loaded host
// was most of its time.
const channelPipeSize = 1 << 20

// growPipe enlarges a pipe. Best effort: only speed depends on it (an unprivileged
// process may not exceed /proc/sys/fs/pipe-max-size).
func growPipe(f *os.File) {
	_, _ = unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, channelPipeSize)
}
