package fsops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/grepmatch"
)

// TestGrepMappedFile covers files past MmapThreshold, which are mapped, not read.
func TestGrepMappedFile(t *testing.T) {
	dir := t.TempDir()
	data := strings.Repeat("filler line\n", grepmatch.MmapThreshold/12+10) + "the needle\n"
	require.Greater(t, len(data), grepmatch.MmapThreshold)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.txt"), []byte(data), 0o644))
	lines := strings.Count(data, "\n")
	for _, path := range []string{".", "big.txt"} {
		r, err := Grep(context.Background(), dir, GrepArgs{Pattern: "needle", Path: path})
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("big.txt:%d: the needle", lines), r.Content[0].Text, path)
	}
}

// TestGrepLongBinaryFiles covers files longer than one buffer fill, whose first fill is
// read alone: a NUL in it skips the file unread past it, unless a UTF-16 BOM makes the
// file text; a NUL only in a later fill keeps the first fill's lines; a file named
// explicitly is searched whole.
func TestGrepLongBinaryFiles(t *testing.T) {
	dir := t.TempDir()
	filler := strings.Repeat("filler line\n", grepmatch.BufferSize/12+100)
	utf16 := []byte{0xFF, 0xFE}
	for _, c := range "x\n" + filler + "needle\n" {
		utf16 = append(utf16, byte(c), 0)
	}
	files := map[string]string{
		"nul-first.bin":  "head\x00\n" + filler + "needle\n",
		"nul-late.txt":   "needle early\n" + filler + "\x00needle late\n",
		"bom-nul.txt":    "\xef\xbb\xbf\x00" + filler + "needle\n",
		"text-long.txt":  filler + "needle\n",
		"utf16-long.txt": string(utf16),
	}
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	lines := strings.Count(filler, "\n")
	r, err := Grep(context.Background(), dir, GrepArgs{Pattern: "needle"})
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("nul-late.txt:1: needle early\ntext-long.txt:%d: needle\nutf16-long.txt:%d: needle", lines+1, lines+2), r.Content[0].Text)
	r, err = Grep(context.Background(), dir, GrepArgs{Pattern: "needle", Path: "nul-first.bin"})
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("nul-first.bin:%d: needle", lines+2), r.Content[0].Text)
}
