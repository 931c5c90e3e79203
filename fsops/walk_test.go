package fsops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func makeWalkTree(t *testing.T, files ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, f := range files {
		p := filepath.Join(root, f)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		if strings.HasSuffix(f, "/") {
			continue
		}
		require.NoError(t, os.WriteFile(p, nil, 0o644))
	}
	return root
}

func walkAll(t *testing.T, ctx context.Context, root string, opt walkOptions) []string {
	t.Helper()
	var got []string
	err := walkTree(ctx, root, opt, func(e walkEntry) bool {
		if e.isDir() {
			got = append(got, e.rel+"/")
		} else {
			got = append(got, e.rel)
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
	root := makeWalkTree(t, files...)
	first := walkAll(t, context.Background(), root, walkOptions{})
	for i := 0; i < 5; i++ {
		require.Equal(t, first, walkAll(t, context.Background(), root, walkOptions{}))
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
	root := makeWalkTree(t, ".git/HEAD", ".gitignore", "a.log", "b.txt", "sub/c.log", "sub/d.txt")
	require.NoError(t, os.WriteFile(filepath.Join(root, ".gitignore"), []byte("*.log\n"), 0o644))
	got := walkAll(t, context.Background(), root, walkOptions{names: ignoreFileNames{custom: ".fdignore"}, requireGit: true, skipGitDir: true})
	assert.Equal(t, []string{".gitignore", "b.txt", "sub/", "sub/d.txt"}, got)
}

func TestWalkStopsEarly(t *testing.T) {
	root := makeWalkTree(t, "a/1", "a/2", "b/1", "c/1")
	var seen []string
	err := walkTree(context.Background(), root, walkOptions{}, func(e walkEntry) bool {
		seen = append(seen, e.rel)
		return len(seen) < 2
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "a/1"}, seen)
}

func TestToolsAbortOnCancelledContext(t *testing.T) {
	root := makeWalkTree(t, "a/1", "b/2")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Grep(ctx, root, GrepArgs{Pattern: "x"})
	assert.EqualError(t, err, "Operation aborted")
	_, err = Find(ctx, root, FindArgs{Pattern: "*"})
	assert.EqualError(t, err, "Operation aborted")
	_, err = Ls(ctx, root, LsArgs{})
	assert.EqualError(t, err, "Operation aborted")
}

func TestSortLikeJS(t *testing.T) {
	// The order Node 22 (full ICU) gives for a.toLowerCase().localeCompare(b.toLowerCase()).
	names := []string{"b", "B2", "_x", "-y", "10", "9", "é", "e", "f", ".dot", "a_b", "a-b", "a.b", "ab"}
	sortLikeJS(names)
	assert.Equal(t, []string{"_x", "-y", ".dot", "10", "9", "a_b", "a-b", "a.b", "ab", "b", "B2", "e", "é", "f"}, names)
}

// TestGrepCancelledMidWalk cancels a search while it runs; it must return promptly
// with pi's abort error (or its result, if it finished first) and never hang.
func TestGrepCancelledMidWalk(t *testing.T) {
	var files []string
	for i := 0; i < 400; i++ {
		files = append(files, fmt.Sprintf("d%03d/f.txt", i))
	}
	root := makeWalkTree(t, files...)
	for i := 0; i < 200; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := Grep(ctx, root, GrepArgs{Pattern: "x"})
			done <- err
		}()
		time.Sleep(time.Duration(i%50) * 20 * time.Microsecond) // cancel at varying points
		cancel()
		select {
		case err := <-done:
			if err != nil {
				assert.EqualError(t, err, "Operation aborted")
			}
		case <-time.After(30 * time.Second): // a deadlock, not a slow run
			t.Fatal("grep did not return after its context was cancelled")
		}
	}
}
