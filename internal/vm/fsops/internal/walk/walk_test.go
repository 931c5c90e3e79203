package walk

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func walkAll(t *testing.T, ctx context.Context, root string, opt Options) []string {
	t.Helper()
	var got []string
	err := Tree(ctx, root, opt, func(e Entry) bool {
		if e.IsDir() {
			got = append(got, e.Rel+"/")
		} else {
			got = append(got, e.Rel)
		}
		return true
	})
	require.NoError(t, err)
	return got
}

// TestWalkOrder checks that the parallel walk is depth-first with each directory's
// entries in byte order, the same on every run, on a tree wide and deep enough for
// the workers to race.
func TestWalkOrder(t *testing.T) {
	var files []string
	for i := 0; i < 30; i++ {
		for j := 0; j < 10; j++ {
			files = append(files, fmt.Sprintf("d%02d/s%d/f%d", i, j, (i*j)%7))
		}
	}
	files = append(files, "a-b/x", "a/x", "a.b", "B")
	root := testbin.Tree(t, files...)
	first := walkAll(t, context.Background(), root, Options{})
	for i := 0; i < 5; i++ {
		require.Equal(t, first, walkAll(t, context.Background(), root, Options{}))
	}
	// Component-wise order: "a/x" comes before "a-b/x" although '-' < '/'.
	assert.Equal(t, []string{"B", "a/", "a/x", "a-b/", "a-b/x", "a.b"}, first[:6])
	// Each directory's children are contiguous and sorted.
	var dirs []string
	for _, p := range first {
		if strings.Count(p, "/") == 1 && strings.HasSuffix(p, "/") {
			dirs = append(dirs, strings.TrimSuffix(p, "/"))
		}
	}
	assert.True(t, sort.StringsAreSorted(dirs))
}

func TestWalkSkipsGitAndHonoursIgnores(t *testing.T) {
	root := testbin.Tree(t, ".git/HEAD", ".gitignore", "a.log", "b.txt", "sub/c.log", "sub/d.txt")
	require.NoError(t, os.WriteFile(filepath.Join(root, ".gitignore"), []byte("*.log\n"), 0o644))
	got := walkAll(t, context.Background(), root, Options{Names: IgnoreFileNames{Custom: ".fdignore"}, RequireGit: true, SkipGitDir: true})
	assert.Equal(t, []string{".gitignore", "b.txt", "sub/", "sub/d.txt"}, got)
}

func TestWalkStopsEarly(t *testing.T) {
	root := testbin.Tree(t, "a/1", "a/2", "b/1", "c/1")
	var seen []string
	err := Tree(context.Background(), root, Options{}, func(e Entry) bool {
		seen = append(seen, e.Rel)
		return len(seen) < 2
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "a/1"}, seen)
}

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
		opt := Options{onRead: func() { reads.Add(1) }}
		require.NoError(t, Tree(context.Background(), root, opt, func(Entry) bool {
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
