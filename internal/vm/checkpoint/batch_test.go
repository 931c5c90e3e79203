package checkpoint

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBatchTakesWhatGitAddTakes: a checkpoint of named files through the Batch has the
// tree `git add -A` gives (a full checkpoint of a twin work tree, step by step): changed,
// new, ignored and re-included, removed and never-there files, new and emptied
// directories, executable bits, names git sorts apart from their bytes; what it does not
// handle (links, directories, nested repositories, a file where a directory was) goes
// to the full checkpoint, with the same result. An undo after it restores exactly.
func TestBatchTakesWhatGitAddTakes(t *testing.T) {
	type step struct {
		name   string
		change func(t *testing.T, root string)
		paths  []string // named, relative
		full   bool     // the Batch hands it to the full checkpoint
	}
	write := func(p, c string) func(*testing.T, string) {
		return func(t *testing.T, root string) {
			full := filepath.Join(root, p)
			require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
			require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
		}
	}
	remove := func(p string) func(*testing.T, string) {
		return func(t *testing.T, root string) { require.NoError(t, os.RemoveAll(filepath.Join(root, p))) }
	}
	steps := []step{
		{"modified", write("a.txt", "a2\n"), []string{"a.txt"}, false},
		{"new", write("n.txt", "n\n"), []string{"n.txt"}, false},
		{"ignored", write("z.log", "z\n"), []string{"z.log"}, false},
		{"re-included", write("keep.log", "k\n"), []string{"keep.log"}, false},
		{"in an ignored directory", write("build/o.txt", "o\n"), []string{"build/o.txt"}, false},
		{"new directories", write("p/q/r.txt", "r\n"), []string{"p/q/r.txt"}, false},
		{"removed, its directory emptied", remove("d/e/c.txt"), []string{"d/e/c.txt"}, false},
		{"never there", func(*testing.T, string) {}, []string{"no/such.txt"}, false},
		{"executable", func(t *testing.T, root string) {
			require.NoError(t, os.Chmod(filepath.Join(root, "a.txt"), 0o755))
		}, []string{"a.txt"}, false},
		{"odd names", write("sp ace/ü\tx.txt", "u\n"), []string{"sp ace/ü\tx.txt"}, false},
		{"sorted apart (d.txt, d-x, the directory d)", func(t *testing.T, root string) {
			write("d.txt", "dt\n")(t, root)
			write("d-x", "dx\n")(t, root)
			write("d/b.txt", "b2\n")(t, root)
		}, []string{"d.txt", "d-x", "d/b.txt"}, false},
		{"back as it was", write("n.txt", "n\n"), []string{"n.txt"}, false},
		// git's processes read each rule file once: a changed one is read again.
		{"a rule file changed", write(".gitignore", "*.log\n!keep.log\nbuild/\n*.tmp\n"), []string{".gitignore"}, false},
		{"ignored by the changed rule", write("t.tmp", "t\n"), []string{"t.tmp"}, false},
		{"an attribute file changed", write(".gitattributes", "*.crlf text eol=crlf\n"), []string{".gitattributes"}, false},
		{"converted by the changed attributes", write("w.crlf", "w\r\nx\r\n"), []string{"w.crlf"}, false},
		{"a link", func(t *testing.T, root string) {
			require.NoError(t, os.Symlink("a.txt", filepath.Join(root, "l")))
		}, []string{"l"}, true},
		{"a directory named", write("p/q/s.txt", "s\n"), []string{"p/q"}, true},
		{"a nested repository", func(t *testing.T, root string) {
			write("sub/f.txt", "f\n")(t, root)
			out, err := exec.Command("git", "init", "-q", filepath.Join(root, "sub")).CombinedOutput()
			require.NoError(t, err, "%s", out)
		}, []string{"sub/f.txt"}, true},
		{"a file where a directory was", func(t *testing.T, root string) {
			remove("p")(t, root)
			write("p", "p is a file\n")(t, root)
		}, []string{"p"}, true},
		{"a directory where a file was", func(t *testing.T, root string) {
			remove("n.txt")(t, root)
			write("n.txt/x", "x\n")(t, root)
		}, []string{"n.txt/x"}, true},
		{"many at once", func(t *testing.T, root string) {
			for i := range 300 { // more than one pipelined chunk
				write("m/"+strconv.Itoa(i)+".txt", "m\n")(t, root)
			}
			remove("x.sh")(t, root)
		}, append([]string{"x.sh"}, func() (p []string) {
			for i := range 300 {
				p = append(p, "m/"+strconv.Itoa(i)+".txt")
			}
			return p
		}()...), false},
	}
	files := map[string]string{"a.txt": "a\n", "d/b.txt": "b\n", "d/e/c.txt": "c\n", "x.sh": "x\n",
		".gitignore": "*.log\n!keep.log\nbuild/\n"}
	for _, mode := range []string{"clone", "private", "clone-sha256"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			fixture := func() Journal {
				j := journalFixture(t, mode != "private", files)
				if mode == "clone-sha256" {
					require.NoError(t, os.RemoveAll(j.GitDir))
					out, err := exec.Command("git", "init", "-q", "--object-format=sha256", j.Root).CombinedOutput()
					require.NoError(t, err, "%s", out)
				}
				return j
			}
			fast, twin := fixture(), fixture()
			fast.Batch = &Batch{}
			defer fast.Batch.Close()
			last, err := fast.Take(ctx, "", "", "refs/pi-sbx/journal/0", "start")
			require.NoError(t, err)
			twinLast, err := twin.Take(ctx, "", "", "refs/pi-sbx/journal/0", "start")
			require.NoError(t, err)
			require.Equal(t, twinLast.Tree, last.Tree)
			first := last
			for i, s := range steps {
				s.change(t, fast.Root)
				s.change(t, twin.Root)
				var named []string
				for _, p := range s.paths {
					named = append(named, filepath.Join(fast.Root, p))
				}
				ref := "refs/pi-sbx/journal/" + strconv.Itoa(i+1)
				cp, err := fast.Batch.take(ctx, fast, last.Commit, last.Tree, ref, s.name, named)
				if s.full {
					require.ErrorIs(t, err, errFull, s.name)
					cp, err = fast.Take(ctx, last.Commit, last.Tree, ref, s.name, named...)
				}
				require.NoError(t, err, s.name)
				want, err := twin.Take(ctx, twinLast.Commit, twinLast.Tree, ref, s.name)
				require.NoError(t, err, s.name)
				require.Equal(t, want.Tree, cp.Tree, "%s: the tree git add -A gives", s.name)
				require.Equal(t, want.Changed, cp.Changed, s.name)
				if cp.Changed {
					got, err := fast.git(ctx, nil, "rev-parse", ref, ref+"^{tree}", ref+"^")
					require.NoError(t, err, s.name)
					assert.Equal(t, cp.Commit+"\n"+cp.Tree+"\n"+last.Commit, got, "%s: the ref names the commit, on its parent", s.name)
				}
				last, twinLast = cp, want
			}
			out, err := fast.git(ctx, nil, "fsck", "--no-dangling")
			require.NoError(t, err, "%s", out)

			// An undo over an index the Batch left behind: the full checkpoint first (as
			// the host takes one), then the restore, removes what the Batch added.
			before := readTree(t, fast.Root)
			all, err := fast.Take(ctx, last.Commit, last.Tree, "refs/pi-sbx/journal/100", "before the undo")
			require.NoError(t, err)
			assert.False(t, all.Changed, "the Batch's checkpoints held every change")
			require.NoError(t, fast.Restore(ctx, first.Commit))
			want := map[string]string{}
			for p, c := range files {
				want[p] = c
			}
			for p, c := range before { // what the journal never holds stays
				if ignoredOrNested(p) {
					want[p] = c
				}
			}
			assert.Equal(t, want, readTree(t, fast.Root))
		})
	}
}

// ignoredOrNested reports whether the steps' file p is one no checkpoint holds.
func ignoredOrNested(p string) bool {
	switch p {
	case "z.log", "build/o.txt", "sub/f.txt", "t.tmp":
		return true
	}
	return false
}
