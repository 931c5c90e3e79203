//go:build e2e

package shell

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBashFullOutputFileUnwritable: when the full-output file cannot be written (here a
// 64 KB tmpfs as the temp directory, root only, as CI runs), the command's output tail
// and exit code stand, and the notice says the full output was not saved.
func TestBashFullOutputFileUnwritable(t *testing.T) {
	tmp := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "pi-sbx-test", tmp).CombinedOutput()
	require.NoError(t, err, "mount a tmpfs (the test needs root): %s", out)
	t.Cleanup(func() { exec.Command("umount", "-l", tmp).Run() })

	r, err := Bash(context.Background(), t.TempDir(), BashArgs{Command: "seq 1 100000; exit 3"}, BashOptions{TempDir: tmp})
	require.NoError(t, err)
	require.Len(t, r.Content, 1)
	text := r.Content[0].Text
	assert.True(t, r.IsError)
	assert.Contains(t, text, "\n100000\n\n[Showing lines ")
	assert.Regexp(t, `\. Full output not saved: writing full output file: write `+tmp+`/pi-bash-[0-9a-f]{16}\.log: no space left on device\]\n\nCommand exited with code 3$`, text)
	d, ok := r.Details.(BashDetails)
	require.True(t, ok)
	assert.Empty(t, d.FullOutputPath)
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, entries, "the partial file is removed")
}
