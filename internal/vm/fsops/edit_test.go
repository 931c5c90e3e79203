package fsops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEditErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	write("a.txt", "one\ntwo\ntwo\n")
	write("latin1.txt", "caf\xe9\n")
	tests := []struct {
		name  string
		args  EditArgs
		want  string
		file  string
		after string
	}{
		{"empty edits", EditArgs{Path: "a.txt"}, "Edit tool input is invalid. edits must contain at least one replacement.", "a.txt", "one\ntwo\ntwo\n"},
		{"missing", EditArgs{Path: "nope.txt", Edits: []Replacement{{OldText: "a", NewText: "b"}}}, "Could not edit file: nope.txt. Error code: ENOENT.", "", ""},
		{"duplicate", EditArgs{Path: "a.txt", Edits: []Replacement{{OldText: "two", NewText: "2"}}},
			"Found 2 occurrences of the text in a.txt. The text must be unique. Please provide more context to make it unique.", "a.txt", "one\ntwo\ntwo\n"},
		{"not UTF-8", EditArgs{Path: "latin1.txt", Edits: []Replacement{{OldText: "caf", NewText: "CAF"}}},
			"Could not edit file: latin1.txt. It is not valid UTF-8 text, and editing it would replace its undecodable bytes with U+FFFD.", "latin1.txt", "caf\xe9\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Edit(context.Background(), dir, tt.args, nil)
			require.EqualError(t, err, tt.want)
			if tt.file != "" {
				b, err := os.ReadFile(filepath.Join(dir, tt.file))
				require.NoError(t, err)
				assert.Equal(t, tt.after, string(b), "file untouched")
			}
		})
	}
}

// TestConcurrentEditsSerialized runs many edits of one file at once, each replacing its
// own marker. Each edit reads, changes and writes the whole file, so without the
// mutation queue concurrent edits would overwrite each other's changes.
func TestConcurrentEditsSerialized(t *testing.T) {
	dir := t.TempDir()
	const n = 40
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "slot %d: todo\n", i)
	}
	p := filepath.Join(dir, "shared.txt")
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
	// Reach the file through a symlink too: the queue keys by real path.
	require.NoError(t, os.Symlink("shared.txt", filepath.Join(dir, "alias.txt")))

	ctx, q := context.Background(), NewMutationQueue()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			name := "shared.txt"
			if i%2 == 1 {
				name = "alias.txt"
			}
			_, errs[i] = Edit(ctx, dir, EditArgs{Path: name, Edits: []Replacement{{
				OldText: "slot " + strconv.Itoa(i) + ": todo", NewText: "slot " + strconv.Itoa(i) + ": done"}}}, q)
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "edit %d", i)
	}
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, strings.ReplaceAll(b.String(), "todo", "done"), string(got), "no edit lost")
	info, err := os.Lstat(filepath.Join(dir, "alias.txt"))
	require.NoError(t, err)
	assert.True(t, info.Mode()&os.ModeSymlink != 0, "the symlink is still a symlink")
}
