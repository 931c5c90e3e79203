package checkpoint

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// journalFixture is a work tree with files, in a git repository of its own (clone) or
// none (a private repository outside it), and the Journal over it.
func journalFixture(t testing.TB, clone bool, files map[string]string) Journal {
	t.Helper()
	root, priv := t.TempDir(), t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
		// A workspace's files are older than the index that lists them (none is racily
		// clean, as files written in the index's own second are, which git re-reads).
		old := time.Now().Add(-time.Hour)
		require.NoError(t, os.Chtimes(full, old, old))
	}
	j := Journal{Root: root, GitDir: filepath.Join(priv, "journal.git"), Index: filepath.Join(priv, "index")}
	if clone {
		cmd := exec.Command("git", "init", "-q", root)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		j.GitDir = filepath.Join(root, ".git")
	}
	return j
}

// readTree reads every file under root but .git: path -> content.
func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			rel, _ := filepath.Rel(root, p)
			out[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	}))
	return out
}

// TestJournalTakeAndRestore: a checkpoint is a commit on its ref whose tree holds the
// work tree (untracked files too, ignored ones and .git never); the same tree again
// writes nothing; restore writes an earlier checkpoint's files back and removes the
// ones it lacks, leaving ignored files; the workspace's own index and HEAD are never
// touched.
func TestJournalTakeAndRestore(t *testing.T) {
	for _, clone := range []bool{true, false} {
		t.Run(map[bool]string{true: "clone", false: "private"}[clone], func(t *testing.T) {
			ctx := context.Background()
			j := journalFixture(t, clone, map[string]string{"a.txt": "a\n", "d/b.txt": "b\n", ".gitignore": "*.log\n", "x.log": "ignored\n"})
			var indexBefore []byte
			if clone {
				indexBefore, _ = os.ReadFile(filepath.Join(j.GitDir, "index"))
			}
			start := readTree(t, j.Root)
			c0, err := j.Take(ctx, "", "", "refs/pi-sbx/journal/0", "start")
			require.NoError(t, err)
			require.True(t, c0.Changed)

			same, err := j.Take(ctx, c0.Commit, c0.Tree, "refs/pi-sbx/journal/1", "nothing")
			require.NoError(t, err)
			assert.False(t, same.Changed, "the same tree records nothing")
			assert.Equal(t, c0.Tree, same.Tree)
			_, err = j.git(ctx, nil, "rev-parse", "-q", "--verify", "refs/pi-sbx/journal/1")
			assert.Error(t, err, "no ref for a call that changed nothing")

			require.NoError(t, os.WriteFile(filepath.Join(j.Root, "a.txt"), []byte("changed\n"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(j.Root, "new.txt"), []byte("new\n"), 0o644))
			require.NoError(t, os.Remove(filepath.Join(j.Root, "d/b.txt")))
			require.NoError(t, os.WriteFile(filepath.Join(j.Root, "y.log"), []byte("ignored too\n"), 0o644))
			c1, err := j.Take(ctx, c0.Commit, c0.Tree, "refs/pi-sbx/journal/1", "call 1")
			require.NoError(t, err)
			require.True(t, c1.Changed)
			parent, err := j.git(ctx, nil, "rev-parse", c1.Commit+"^")
			require.NoError(t, err)
			assert.Equal(t, c0.Commit, parent, "checkpoints chain")
			ls, err := j.git(ctx, nil, "ls-tree", "-r", "--name-only", c1.Commit)
			require.NoError(t, err)
			assert.Equal(t, []string{".gitignore", "a.txt", "new.txt"}, strings.Fields(ls), "untracked files in, ignored ones and .git never")
			after1 := readTree(t, j.Root)

			// Named paths: only they are looked at; a path that matches nothing is no error.
			require.NoError(t, os.WriteFile(filepath.Join(j.Root, "named.txt"), []byte("named\n"), 0o644))
			c2, err := j.Take(ctx, c1.Commit, c1.Tree, "refs/pi-sbx/journal/2", "a write", filepath.Join(j.Root, "named.txt"))
			require.NoError(t, err)
			require.True(t, c2.Changed)
			require.NoError(t, os.Remove(filepath.Join(j.Root, "named.txt")))
			c3, err := j.Take(ctx, c2.Commit, c2.Tree, "refs/pi-sbx/journal/3", "gone", filepath.Join(j.Root, "no", "such"))
			require.NoError(t, err)
			assert.Equal(t, c1.Tree, c3.Tree, "a named path that matches nothing looks at all of the tree")

			require.NoError(t, j.Restore(ctx, c0.Commit))
			want := map[string]string{}
			for p, c := range start {
				want[p] = c
			}
			want["y.log"] = "ignored too\n" // ignored: not the journal's
			assert.Equal(t, want, readTree(t, j.Root), "checkpoint 0's files back, new.txt gone")

			_, err = j.Take(ctx, c3.Commit, c3.Tree, "refs/pi-sbx/journal/4", "undo")
			require.NoError(t, err)
			require.NoError(t, j.Restore(ctx, c1.Commit))
			assert.Equal(t, after1, readTree(t, j.Root), "the undo undone")
			if clone {
				indexAfter, _ := os.ReadFile(filepath.Join(j.GitDir, "index"))
				assert.Equal(t, indexBefore, indexAfter, "the workspace's own index is untouched")
				_, err := exec.Command("git", "-C", j.Root, "rev-parse", "-q", "--verify", "HEAD").Output()
				assert.Error(t, err, "no commit on the workspace's branch")
			}
		})
	}
}

// TestHolders: a process whose working directory is in the tree is named; this process
// (and its ancestors) never.
func TestHolders(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("holders are read from /proc: the VM is linux")
	}
	root := t.TempDir()
	for _, h := range Holders(root) {
		t.Errorf("nothing holds %s yet, got %+v", root, h)
	}
	cmd := exec.Command("sleep", "30")
	cmd.Dir = root
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var pids []int
	for _, h := range Holders(root) {
		pids = append(pids, h.PID)
		assert.Equal(t, "sleep", h.Command)
		assert.Equal(t, []string{root}, h.Files)
	}
	assert.Equal(t, []int{cmd.Process.Pid}, pids)
}

// TestJournalStaleIndexLock: a lock left on the private index by a git that was killed
// stops checkpoints only while it could still be a running one's.
func TestJournalStaleIndexLock(t *testing.T) {
	ctx := context.Background()
	j := journalFixture(t, false, map[string]string{"a.txt": "a\n"})
	require.NoError(t, os.MkdirAll(filepath.Dir(j.Index), 0o700))
	require.NoError(t, os.WriteFile(j.Index+".lock", nil, 0o600))
	_, err := j.Take(ctx, "", "", "refs/pi-sbx/journal/0", "start")
	assert.ErrorContains(t, err, "index.lock", "a fresh lock may be a running checkpoint's")
	old := time.Now().Add(-Timeout - time.Minute)
	require.NoError(t, os.Chtimes(j.Index+".lock", old, old))
	cp, err := j.Take(ctx, "", "", "refs/pi-sbx/journal/0", "start")
	require.NoError(t, err)
	assert.True(t, cp.Changed)
}
