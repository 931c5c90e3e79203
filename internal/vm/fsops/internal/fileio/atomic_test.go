package fileio

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLargeWriteIsUnnamedUntilDone: a write of ReplaceMin bytes or more goes to a file
// that has no name while it is written (O_TMPFILE), so a writer killed meanwhile leaves
// nothing in the directory; once done, only the target is there.
func TestLargeWriteIsUnnamedUntilDone(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "big.txt")
	require.NoError(t, os.WriteFile(target, []byte("old\n"), 0o640))
	var during []string
	err := WriteFile(target, ReplaceMin, func(w io.Writer) error {
		if _, err := io.WriteString(w, strings.Repeat("a", ReplaceMin/2)); err != nil {
			return err
		}
		ents, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range ents {
			during = append(during, e.Name())
		}
		_, err = io.WriteString(w, strings.Repeat("b", ReplaceMin/2))
		return err
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"big.txt"}, during, "mid-write, the directory holds only the target")
	got, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("a", ReplaceMin/2)+strings.Repeat("b", ReplaceMin/2), string(got))
	st, err := os.Stat(target)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), st.Mode().Perm(), "the mode is kept")
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, ents, 1)
}

func TestIsOwnTemp(t *testing.T) {
	for name, want := range map[string]bool{
		".main.go.pi-sbx-b7988695b5e3.tmp": true,
		".x.pi-sbx-000000000000.tmp":       true,
		"main.go":                          false,
		".main.go.pi-sbx-b7988695b5e.tmp":  false, // 11 hex digits
		".main.go.pi-sbx-b7988695b5eZ.tmp": false,
		"main.go.pi-sbx-b7988695b5e3.tmp":  false, // not hidden
		".main.go.pi-sbx-b7988695b5e3.tm":  false,
		".pi-sbx-b7988695b5e3.tmp":         false, // no base
	} {
		assert.Equal(t, want, IsOwnTemp(name), name)
	}
}
