package checkpoint

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// changeSteps are shell commands run in a work tree between checkpoints.
type changeStep struct{ name, sh string }

// commandSteps are the commands TestWatchTakesWhatGitAddTakes and
// TestScanTakesWhatGitAddTakes run.
var commandSteps = []changeStep{
	{"modified", "echo a2 > a.txt"},
	{"nothing", "cat a.txt >/dev/null"},
	{"new directories, made at once", "mkdir -p p/q/r && echo r > p/q/r/f.txt && echo s > p/s.txt"},
	{"ignored", "echo z > z.log && mkdir -p build && echo o > build/o.txt"},
	{"removed, directories and all", "rm -rf d"},
	{"executable", "chmod +x a.txt"},
	{"renamed file", "mv p/s.txt p/t.txt"},
	{"renamed directory", "mv p/q p/q2"},
	{"changed inside the renamed directory", "echo r2 > p/q2/r/f.txt"},
	{"a link", "ln -s a.txt l"},
	{"a rule changed", "echo '*.tmp' >> .gitignore && echo t > t.tmp"},
	{"many files", "mkdir many && for i in $(seq 1 1100); do echo $i > many/$i; done"},
	{"one of many", "echo x > many/7"},
	{"written by a child a moment later", "(sleep 0.2; echo late > late.txt) & wait"},
}

// TestWatchTakesWhatGitAddTakes: with a Watch, a checkpoint after a command looks only at
// what inotify saw change, and has the tree a full checkpoint of a twin work tree has,
// after each of these commands; a command that changed nothing records nothing without
// running git; where the watch loses track (a directory moved, too many files) the
// checkpoint looks at all of the tree.
func TestWatchTakesWhatGitAddTakes(t *testing.T) {
	watch := func(t *testing.T, root string) Changes {
		w, err := NewWatch(root)
		require.NoError(t, err)
		t.Cleanup(w.Close)
		return w
	}
	// In a clone's own repository, and in a private one outside the work tree (an
	// overlay's).
	t.Run("clone", func(t *testing.T) { takesWhatGitAddTakes(t, true, watch, commandSteps) })
	t.Run("private", func(t *testing.T) { takesWhatGitAddTakes(t, false, watch, commandSteps) })
}

// takesWhatGitAddTakes runs steps in a work tree journaled with changes (made before the
// first checkpoint) and in a twin whose every checkpoint is git's full one: each step's
// trees must be the same. Then a checkpoint that fails must leave its change to the
// next one.
func takesWhatGitAddTakes(t *testing.T, clone bool, changes func(*testing.T, string) Changes, steps []changeStep) {
	files := map[string]string{"a.txt": "a\n", "d/b.txt": "b\n", "d/e/c.txt": "c\n", ".gitignore": "*.log\nbuild/\n"}
	ctx := context.Background()
	watched, twin := journalFixture(t, clone, files), journalFixture(t, clone, files)
	watched.Batch = &Batch{}
	defer watched.Batch.Close()
	c := changes(t, watched.Root)
	last, err := watched.Take(ctx, "", "", "refs/pi-sbx/journal/0", "start")
	require.NoError(t, err)
	twinLast, err := twin.Take(ctx, "", "", "refs/pi-sbx/journal/0", "start")
	require.NoError(t, err)
	watched.Changes = c
	for i, s := range steps {
		for _, j := range []Journal{watched, twin} {
			cmd := exec.Command("sh", "-c", s.sh)
			cmd.Dir = j.Root
			cmd.Env = append(os.Environ(), "JOURNAL="+j.GitDir) // its repository, for its info/exclude
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s: %s", s.name, out)
		}
		ref := "refs/pi-sbx/journal/" + strconv.Itoa(i+1)
		cp, err := watched.Take(ctx, last.Commit, last.Tree, ref, s.name)
		require.NoError(t, err, s.name)
		want, err := twin.Take(ctx, twinLast.Commit, twinLast.Tree, ref, s.name)
		require.NoError(t, err, s.name)
		require.Equal(t, want.Tree, cp.Tree, "%s: the tree git add -A gives", s.name)
		assert.Equal(t, want.Changed, cp.Changed, s.name)
		last, twinLast = cp, want
	}

	// A checkpoint that fails after the watch named its paths: the next one looks at all
	// of the tree, so the change is not lost.
	require.NoError(t, exec.Command("sh", "-c", "echo lost > "+watched.Root+"/lost.txt && echo lost > "+twin.Root+"/lost.txt").Run())
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = watched.Take(cancelled, last.Commit, last.Tree, "refs/pi-sbx/journal/98", "cancelled")
	require.Error(t, err)
	cp, err := watched.Take(ctx, last.Commit, last.Tree, "refs/pi-sbx/journal/99", "after")
	require.NoError(t, err)
	want, err := twin.Take(ctx, twinLast.Commit, twinLast.Tree, "refs/pi-sbx/journal/99", "after")
	require.NoError(t, err)
	assert.True(t, cp.Changed, "lost.txt is in the next checkpoint")
	assert.Equal(t, want.Tree, cp.Tree)
}

// TestWatchLeavesACommandsChangesToIt: a write's checkpoint (its file named) beside a
// command that changed another file holds the write's file alone; the command's own
// checkpoint then holds its change (pi runs a turn's tool calls side by side).
func TestWatchLeavesACommandsChangesToIt(t *testing.T) {
	ctx := context.Background()
	j := journalFixture(t, true, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	j.Batch = &Batch{}
	defer j.Batch.Close()
	w, err := NewWatch(j.Root)
	require.NoError(t, err)
	defer w.Close()
	c0, err := j.Take(ctx, "", "", "refs/pi-sbx/journal/0", "start")
	require.NoError(t, err)
	j.Changes = w
	require.NoError(t, exec.Command("sh", "-c", "cd "+j.Root+" && echo written > a.txt && echo by-command > b.txt").Run())
	c1, err := j.Take(ctx, c0.Commit, c0.Tree, "refs/pi-sbx/journal/1", "write", j.Root+"/a.txt")
	require.NoError(t, err)
	diff, err := j.git(ctx, nil, "diff-tree", "-r", "--name-only", c0.Commit, c1.Commit)
	require.NoError(t, err)
	assert.Equal(t, "a.txt", diff, "the write's checkpoint")
	c2, err := j.Take(ctx, c1.Commit, c1.Tree, "refs/pi-sbx/journal/2", "bash")
	require.NoError(t, err)
	diff, err = j.git(ctx, nil, "diff-tree", "-r", "--name-only", c1.Commit, c2.Commit)
	require.NoError(t, err)
	assert.Equal(t, "b.txt", diff, "the command's checkpoint")
}
