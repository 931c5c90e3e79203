package fsops

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
	"github.com/stretchr/testify/assert"
)

func TestToolsAbortOnCancelledContext(t *testing.T) {
	root := testbin.Tree(t, "a/1", "b/2")
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
	root := testbin.Tree(t, files...)
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
