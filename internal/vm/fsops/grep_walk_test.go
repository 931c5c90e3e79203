package fsops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/grepmatch"
	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/walk"
)

// openFDs counts this process's open file descriptors, or -1 where /proc is missing.
func openFDs() int {
	des, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(des)
}

// TestGrepDirectoryHandles checks that grep finds the same lines whether files are
// opened relative to their open directory or by path (a bound of 1 or 3 open
// directories forces the fallback), and that no directory stays open after a search:
// a complete one, one ended by its match limit, or one cancelled part way.
func TestGrepDirectoryHandles(t *testing.T) {
	if openFDs() < 0 {
		t.Skip("no /proc/self/fd")
	}
	root := t.TempDir()
	for i := 0; i < 30; i++ {
		for j := 0; j < 3; j++ {
			dir := filepath.Join(root, fmt.Sprintf("d%02d", i), fmt.Sprintf("e%d", j))
			require.NoError(t, os.MkdirAll(dir, 0o755))
			for k := 0; k < 4; k++ {
				text := fmt.Sprintf("line %d\nneedle %d %d %d\n", k, i, j, k)
				require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", k)), []byte(text), 0o644))
			}
		}
		require.NoError(t, os.WriteFile(filepath.Join(root, fmt.Sprintf("d%02d", i), "top.txt"), []byte("needle top\n"), 0o644))
	}
	pat, err := grepmatch.Compile("needle", false, false)
	require.NoError(t, err)
	run := func(ctx context.Context, maxDirs int32, limit int) (string, error) {
		c := &grepCollector{limit: limit}
		opt := walk.Options{Names: walk.IgnoreFileNames{Custom: ".rgignore"}, MaxDirHandles: maxDirs}
		err := searchTree(ctx, root, opt, pat, 0, limit+1, c)
		return fmt.Sprint(c.result().Content), err
	}
	_, err = run(context.Background(), 0, 1) // let the runtime open what it keeps open
	require.NoError(t, err)
	base := openFDs()
	for _, limit := range []int{1, 7, 1 << 20} {
		want, err := run(context.Background(), 0, limit)
		require.NoError(t, err)
		assert.Equal(t, base, openFDs(), "limit %d", limit)
		for _, maxDirs := range []int32{1, 3} {
			got, err := run(context.Background(), maxDirs, limit)
			require.NoError(t, err)
			assert.Equal(t, want, got, "limit %d, at most %d open directories", limit, maxDirs)
			assert.Equal(t, base, openFDs(), "limit %d, at most %d open directories", limit, maxDirs)
		}
	}
	for d := time.Duration(0); d < 3*time.Millisecond; d += 100 * time.Microsecond {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		run(ctx, 0, 1<<20)
		cancel()
		assert.Equal(t, base, openFDs(), "cancelled after %v", d)
	}
}
