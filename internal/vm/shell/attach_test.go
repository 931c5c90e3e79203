package shell

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slowWriter takes its time over the first write, as a slow reader of exec -t's output
// (sbx's stream to the host under load) does.
type slowWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	delay time.Duration
}

func (w *slowWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	delay := w.delay
	w.delay = 0
	w.mu.Unlock()
	time.Sleep(delay) // one write at a time: io.Copy's
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *slowWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestAttachPtyKeepsTheLastOutput: AttachPty returns only once the command's output has
// been written out, however slowly Out takes it; a background process holding the
// terminal does not keep it.
func TestAttachPtyKeepsTheLastOutput(t *testing.T) {
	t.Run("slow output", func(t *testing.T) {
		out := &slowWriter{delay: 2500 * time.Millisecond}
		code, err := AttachPty(context.Background(), []string{"sh", "-c", "echo first; sleep 0.2; echo last"}, AttachOptions{Out: out})
		require.NoError(t, err)
		assert.Zero(t, code)
		assert.Equal(t, "first\r\nlast\r\n", out.String())
	})
	t.Run("background holder", func(t *testing.T) {
		pidFile := filepath.Join(t.TempDir(), "pid")
		out := &slowWriter{}
		code, err := AttachPty(context.Background(), []string{"sh", "-c", "(trap '' HUP; exec sleep 60) & echo $! > " + pidFile + "; echo done"}, AttachOptions{Out: out})
		require.NoError(t, err)
		assert.Zero(t, code)
		assert.Equal(t, "done\r\n", out.String())
		b, err := os.ReadFile(pidFile)
		require.NoError(t, err)
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		require.NoError(t, err)
		// AttachPty returned while the holder (deaf to the terminal's hangup) still ran.
		assert.NoError(t, syscall.Kill(pid, 0), "AttachPty waited for the background process to end")
		_ = syscall.Kill(pid, syscall.SIGKILL)
	})
}
