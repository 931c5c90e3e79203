//go:build e2e

package conformance

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFullDiskAsPi runs write and edit on a full file system (a 4 MB tmpfs per side,
// filled to the last block), pi on one and us on the other. Where pi succeeds we must
// too; where pi fails, with pi's error. Deliberate difference (docs/conformance.md): where pi fails,
// pi has already truncated the file and leaves it empty or cut; we reserve the room
// first and leave the old content.
func TestFullDiskAsPi(t *testing.T) {
	big := "HEAD unique\n" + strings.Repeat("old content line\n", 3<<20/17)
	small := "X" + strings.Repeat("a", 10<<10)
	edit := func(old, new string) map[string]any {
		return map[string]any{"path": "f", "edits": []any{map[string]any{"oldText": old, "newText": new}}}
	}
	cases := []struct {
		name, initial, tool string
		args                map[string]any
	}{
		{"large write shrinking the file", big, "write", map[string]any{"path": "f", "content": strings.Repeat("n", 2<<20)}},
		{"large edit shrinking the file", big, "edit", edit("HEAD unique\n", "H\n")},
		{"small write growing the file", small, "write", map[string]any{"path": "f", "content": strings.Repeat("n", 200<<10)}},
		{"small edit growing the file", small, "edit", edit("X", strings.Repeat("b", 300<<10))},
		{"small write shrinking the file", small, "write", map[string]any{"path": "f", "content": "short\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			piDir, ourDir := fullDisk(t, tc.initial), fullDisk(t, tc.initial)
			want := oracle(t, []Call{{tc.tool, piDir, tc.args}})[0]
			got := local(t, Call{tc.tool, ourDir, tc.args})
			assert.Equal(t, want.Content, got.Content)
			assert.Equal(t, want.IsError, got.IsError)
			piFile, err := os.ReadFile(filepath.Join(piDir, "f"))
			require.NoError(t, err)
			ourFile, err := os.ReadFile(filepath.Join(ourDir, "f"))
			require.NoError(t, err)
			if want.IsError {
				assert.True(t, string(ourFile) == tc.initial, "a failed write keeps the old content (pi left %d of %d bytes)", len(piFile), len(tc.initial))
			} else {
				assert.True(t, string(piFile) == string(ourFile), "the same file: pi %d bytes, ours %d", len(piFile), len(ourFile))
			}
		})
	}
}

// fullDisk is a fresh 4 MB tmpfs holding the file f with content, filled up after it;
// unmounted when the test ends. Mounting needs root, as CI runs.
func fullDisk(t *testing.T, content string) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "pi-sbx-test", dir).CombinedOutput()
	require.NoError(t, err, "mount a tmpfs (the test needs root): %s", out)
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte(content), 0o644))
	f, err := os.Create(filepath.Join(dir, "filler"))
	require.NoError(t, err)
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			require.True(t, errors.Is(err, syscall.ENOSPC), "filling: %v", err)
			return dir
		}
	}
}
