package audit

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStoreListsLogsOldestFirst(t *testing.T) {
	home := t.TempDir()
	s, err := NewStore(home)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(home, "pi-sbx-backend", "audit"), s.Dir)

	_, err = s.Newest()
	require.ErrorContains(t, err, "no audit log in "+s.Dir)
	all, err := s.List()
	require.NoError(t, err, "a store not made yet lists nothing")
	assert.Empty(t, all)

	base := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	for i, name := range []string{"b-box", "a-box", "c-box"} {
		l, err := s.Open(name)
		require.NoError(t, err)
		require.NoError(t, l.Append(Entry{Tool: "ls", Outcome: "ok"}))
		require.NoError(t, os.Chtimes(l.Path, base, base.Add(time.Duration(i)*time.Minute)))
	}
	// Not logs: a rotated file, a directory.
	require.NoError(t, os.WriteFile(filepath.Join(s.Dir, "a-box.jsonl.1"), []byte("{}\n"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(s.Dir, "d.jsonl"), 0o700))

	all, err = s.List()
	require.NoError(t, err)
	var names []string
	for _, l := range all {
		names = append(names, l.Sandbox)
		assert.Positive(t, l.Size)
	}
	assert.Equal(t, []string{"b-box", "a-box", "c-box"}, names)
	newest, err := s.Newest()
	require.NoError(t, err)
	assert.Equal(t, "c-box", newest)
	assert.Equal(t, filepath.Join(s.Dir, "c-box.jsonl"), s.Path("c-box"))

	_, err = NewStore("relative")
	assert.ErrorContains(t, err, "absolute path")
}
