package fsops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWalkStopsReadingAhead checks that a walk ended by its visitor (grep's match
// limit) has not read the whole tree: the workers stay within walkMaxAhead directories
// of the emitter. A full walk still reads every directory.
func TestWalkStopsReadingAhead(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 40; i++ {
		for j := 0; j < 20; j++ {
			dir := filepath.Join(root, fmt.Sprintf("d%02d", i), fmt.Sprintf("e%02d", j))
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte("x\n"), 0o644))
		}
	}
	const dirs = 1 + 40 + 40*20
	count := func(stopAfter int) int64 {
		var reads atomic.Int64
		seen := 0
		opt := walkOptions{onRead: func() { reads.Add(1) }}
		require.NoError(t, walkTree(context.Background(), root, opt, func(walkEntry) bool {
			seen++
			if stopAfter < dirs {
				time.Sleep(time.Millisecond) // a slow consumer: unbounded workers would race ahead
			}
			return seen < stopAfter
		}))
		return reads.Load()
	}
	assert.Equal(t, int64(dirs), count(1<<30))
	// Stopped after 60 entries (about 30 directories): those, plus the bounded
	// read-ahead and what the workers had already taken when told to stop.
	require.LessOrEqual(t, walkMaxAhead, 128)
	assert.LessOrEqual(t, count(60), int64(30+walkMaxAhead+16))
}
