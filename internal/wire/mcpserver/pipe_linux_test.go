package mcpserver

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestGrowPipe: a pipe's buffer grows (from either end), and a file that is not a pipe
// is left alone; the pipe stays non-blocking (no Fd call).
func TestGrowPipe(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	size := func(f *os.File) int {
		rc, err := f.SyscallConn()
		require.NoError(t, err)
		var n int
		require.NoError(t, rc.Control(func(fd uintptr) { n, _ = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0) }))
		return n
	}
	require.Equal(t, 64<<10, size(w))
	GrowPipe(r)
	assert.Equal(t, pipeSize, size(w), "grown from the read end")
	require.NoError(t, r.SetReadDeadline(time.Now()), "still in the poller: deadlines work")

	f, err := os.CreateTemp(t.TempDir(), "plain")
	require.NoError(t, err)
	defer f.Close()
	GrowPipe(f) // not a pipe: nothing happens, nothing fails
}
