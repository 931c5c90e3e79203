package shell

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// drain returns every byte that reached the pipe and was not handed over, whether the
// goroutine holds it or the pipe still buffers it, without waiting for a writer that
// keeps the pipe open.
func TestReaderDrainKeepsUnreadBytes(t *testing.T) {
	tests := []struct {
		name string
		size int
	}{
		{"held by the goroutine", 3},
		{"held and still in the pipe", readChunk + 70_000},
		{"nothing", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr, pw, err := os.Pipe()
			require.NoError(t, err)
			defer pw.Close() // open until the end: like a background job holding the pipe
			growPipe(pw)
			want := bytes.Repeat([]byte("0123456789abcdef"), tt.size/16+1)[:tt.size]
			go pw.Write(want) // may block until drained when the pipe is small
			rd := startReader(pr)
			// Let the goroutine read and block handing its chunk over; nobody takes it.
			deadline := time.Now().Add(5 * time.Second)
			for tt.size > 0 && rd.pending() > max(0, tt.size-readChunk) && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(20 * time.Millisecond)
			got, err := rd.drain()
			require.NoError(t, err)
			// A pipe smaller than the write leaves the rest to a later stop; at least
			// what the pipe could hold must be there, in order.
			require.True(t, bytes.HasPrefix(want, got), "drained bytes are not the written ones in order")
			if tt.size <= readChunk {
				assert.Len(t, got, tt.size)
			} else {
				assert.Greater(t, len(got), readChunk)
			}
		})
	}
}

// After end of stream drain has nothing more and does not block.
func TestReaderDrainAfterEOF(t *testing.T) {
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	rd := startReader(pr)
	_, err = pw.Write([]byte("x"))
	require.NoError(t, err)
	pw.Close()
	b := <-rd.chunks
	assert.Equal(t, "x", string(b))
	rd.release(b)
	_, ok := <-rd.chunks
	assert.False(t, ok)
	rest, err := rd.drain()
	require.NoError(t, err)
	assert.Empty(t, rest)
}
