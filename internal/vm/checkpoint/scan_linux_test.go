package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScanTakesWhatGitAddTakes: with a Scan, in a work tree that is not a repository
// (the journal's own is outside it, as for an overlay), a checkpoint after a command
// looks only at the files whose stat changed and has the tree a full checkpoint of a
// twin has, after the commands the Watch is tried with and after these: a file set back
// to an old time, rules that stop or start
// excluding a directory (one the scan no longer walks, one whose files the journal
// already holds), the repository's info/exclude.
func TestScanTakesWhatGitAddTakes(t *testing.T) {
	steps := append(append([]changeStep(nil), commandSteps...),
		changeStep{"set back to its old time and size", "printf 'A2\\n' > a.txt && touch -d '2001-01-01' a.txt"},
		changeStep{"in a directory a rule excludes", "echo o2 > build/o.txt && mkdir -p build/deep && echo p > build/deep/p.txt"},
		changeStep{"its rule gone", "grep -v '^build/$' .gitignore > g && mv g .gitignore"},
		changeStep{"a held directory", "mkdir -p kept && echo k > kept/k.txt"},
		changeStep{"its directory excluded", "echo 'kept/' >> .gitignore && echo k2 > kept/k.txt && echo n > kept/new.txt"},
		changeStep{"held, still followed", "echo k3 > kept/k.txt"},
		changeStep{"and again", "echo k4 > kept/k.txt"},
		changeStep{"info/exclude", "mkdir -p $JOURNAL/info v && echo 'p/' > $JOURNAL/info/exclude && echo x > p/x.txt && echo v > v/v.txt"},
		changeStep{"info/exclude excludes a new directory", "echo 'v/' >> $JOURNAL/info/exclude && echo v2 > v/v.txt && mkdir u && echo u > u/u.txt && echo 'u/' >> $JOURNAL/info/exclude"},
		changeStep{"in it", "echo u2 > u/u.txt"},
		changeStep{"info/exclude no longer does", "echo 'p/' > $JOURNAL/info/exclude"},
		changeStep{"a .gitignore in a new directory", "mkdir -p w && printf '*.o\\n' > w/.gitignore && echo o > w/a.o && echo c > w/a.c"},
		changeStep{"a .gitignore removed", "rm w/.gitignore"},
	)
	takesWhatGitAddTakes(t, false, func(_ *testing.T, root string) Changes {
		// Files looked at again only in the same clock tick, not for 2 s: each step
		// is tens of milliseconds, and a bug that looking again hides shows.
		s := NewScan(root)
		s.window = 0
		return s
	}, steps)
}

// TestScanLooksNotInExcludedDirectories: a directory a rule excludes and the journal
// holds nothing of is not read again, so what changes in it is not looked at (git's
// walk does not look in it either); a directory the journal holds files of is.
func TestScanLooksNotInExcludedDirectories(t *testing.T) {
	ctx := context.Background()
	j := journalFixture(t, false, map[string]string{".gitignore": "node_modules/\nheld/\n", "a.txt": "a\n",
		"node_modules/m/index.js": "m\n"})
	j.Batch = &Batch{}
	defer j.Batch.Close()
	require.NoError(t, os.WriteFile(filepath.Join(j.Root, ".gitignore"), []byte("node_modules/\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(j.Root, "held"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(j.Root, "held", "h.txt"), []byte("h\n"), 0o644))
	cp, err := j.Take(ctx, "", "", "refs/pi-sbx/journal/0", "start") // held/h.txt is taken
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(j.Root, ".gitignore"), []byte("node_modules/\nheld/\n"), 0o644))
	old := time.Now().Add(-time.Hour) // not racy: not looked at again for being too new
	for _, p := range []string{".gitignore", "held/h.txt"} {
		require.NoError(t, os.Chtimes(filepath.Join(j.Root, p), old, old))
	}
	s := NewScan(j.Root)
	_, all := s.changed(ctx, j, cp.Tree)
	require.True(t, all, "the first scan has nothing to compare with")
	_, all = s.changed(ctx, j, cp.Tree) // asks which directories it walks
	require.False(t, all)

	require.NoError(t, os.WriteFile(filepath.Join(j.Root, "node_modules", "m", "index.js"), []byte("m2\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(j.Root, "node_modules", "new.js"), []byte("n\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(j.Root, "held", "h.txt"), []byte("h2\n"), 0o644))
	paths, all := s.changed(ctx, j, cp.Tree)
	require.False(t, all)
	assert.Equal(t, []string{filepath.Join(j.Root, "held", "h.txt")}, paths)
	assert.NotContains(t, s.dirs, "node_modules/m", "an excluded directory is not read")
}

// TestScanSeesWhatTimesHide: a file changed to the same size with its old modification
// time set back is found by its change time (git's checkpoint, which trusts no ctime,
// misses it); a file written within the racy window is looked at again by the next scan
// though its stat did not change (a write in the same clock tick would not change it),
// and one older is not.
func TestScanSeesWhatTimesHide(t *testing.T) {
	ctx := context.Background()
	j := journalFixture(t, false, map[string]string{"old.txt": "o1\n", "new.txt": "n1\n"})
	s := NewScan(j.Root)
	_, all := s.changed(ctx, j, "")
	require.True(t, all, "the first scan has nothing to compare with")
	paths, all := s.changed(ctx, j, "")
	require.False(t, all)
	require.Empty(t, paths, "files older than the racy window, unchanged")

	oldFile, newFile := filepath.Join(j.Root, "old.txt"), filepath.Join(j.Root, "new.txt")
	fi, err := os.Stat(oldFile)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(oldFile, []byte("o2\n"), 0o644))
	require.NoError(t, os.Chtimes(oldFile, fi.ModTime(), fi.ModTime()))
	paths, _ = s.changed(ctx, j, "")
	assert.Equal(t, []string{oldFile}, paths, "same size, same modification time, a new change time")

	require.NoError(t, os.WriteFile(newFile, []byte("n2\n"), 0o644))
	paths, _ = s.changed(ctx, j, "")
	assert.Equal(t, []string{newFile}, paths, "written")
	paths, _ = s.changed(ctx, j, "")
	assert.Equal(t, []string{newFile}, paths, "racy: looked at again")
	past := time.Now().Add(-racyWindow - time.Second)
	require.NoError(t, os.Chtimes(newFile, past, past)) // as if the window had passed
	s.changed(ctx, j, "")
	paths, _ = s.changed(ctx, j, "")
	assert.Empty(t, paths, "no longer racy")
}
