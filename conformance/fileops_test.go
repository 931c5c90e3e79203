//go:build e2e

package conformance

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
)

// Helpers shared by the read, write and edit conformance tests.

// fileCase is one call of a file tool. Args may contain "<ROOT>", replaced by the fixture
// root of each side; results have that root replaced back before comparison.
type fileCase struct {
	name string
	tool string
	args map[string]any
	// diff, when set, explains an intended difference from pi: the two results are then
	// checked by check instead of being compared for equality.
	diff  string
	check func(t *testing.T, want, got result.Result)
}

// fileFixture is the same file tree for pi and for us: two copies, so that mutations of
// one side cannot influence the other. Each copy is a git repository whose working
// directory is root/work, with root holding files reached through "..", and every tree has
// the symlink loop work/loop1 -> loop2 -> loop1.
type fileFixture struct {
	oracleRoot, localRoot string
}

func newFileFixture(t *testing.T, build func(root string)) fileFixture {
	t.Helper()
	base := t.TempDir()
	f := fileFixture{oracleRoot: filepath.Join(base, "pi"), localRoot: filepath.Join(base, "us")}
	require.NoError(t, os.MkdirAll(filepath.Join(f.oracleRoot, "work"), 0o755))
	build(f.oracleRoot)
	work := filepath.Join(f.oracleRoot, "work")
	require.NoError(t, os.Symlink("loop2", filepath.Join(work, "loop1")))
	require.NoError(t, os.Symlink("loop1", filepath.Join(work, "loop2")))
	out, err := exec.Command("git", "init", "-q", filepath.Join(f.oracleRoot, "work")).CombinedOutput()
	require.NoError(t, err, "%s", out)
	// An exact copy (modes, symlinks, sparse files) for our side.
	out, err = exec.Command("cp", "-a", "--sparse=always", f.oracleRoot, f.localRoot).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return f
}

// writeFixtureFile creates a file and its directories under root.
func writeFixtureFile(t *testing.T, root, rel string, data []byte) {
	t.Helper()
	p := filepath.Join(root, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, data, 0o644))
}

// substRoot replaces "<ROOT>" in every string of v.
func substRoot(v any, root string) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, "<ROOT>", root)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = substRoot(e, root)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = substRoot(e, root)
		}
		return out
	}
	return v
}

// rootNormalized renders a result as JSON with the fileFixture root replaced by "<ROOT>".
func rootNormalized(t *testing.T, r result.Result, root string) string {
	t.Helper()
	b, err := json.Marshal(r)
	require.NoError(t, err)
	return strings.ReplaceAll(string(b), root, "<ROOT>")
}

// runFileCases runs every case through pi (one node process, in order) and through
// `tool --local` (in the same order, on the other copy) and compares them. HOME is the
// fixture root of the side running, so "~/…" paths stay inside the fixture.
func runFileCases(t *testing.T, f fileFixture, cases []fileCase) {
	t.Helper()
	calls := make([]Call, len(cases))
	for i, c := range cases {
		calls[i] = Call{Tool: c.tool, Cwd: filepath.Join(f.oracleRoot, "work"),
			Args: substRoot(c.args, f.oracleRoot).(map[string]any)}
	}
	// "~" is each side's fixture root.
	t.Setenv("HOME", f.oracleRoot)
	want := oracle(t, calls)
	t.Setenv("HOME", f.localRoot)
	require.Len(t, want, len(cases))
	for i, c := range cases {
		got := local(t, Call{Tool: c.tool, Cwd: filepath.Join(f.localRoot, "work"),
			Args: substRoot(c.args, f.localRoot).(map[string]any)})
		t.Run(c.name, func(t *testing.T) {
			if c.check != nil {
				require.NotEmpty(t, c.diff, "a custom check must state the intended difference")
				c.check(t, withRoot(want[i], f.oracleRoot), withRoot(got, f.localRoot))
				return
			}
			assert.JSONEq(t, rootNormalized(t, want[i], f.oracleRoot), rootNormalized(t, got, f.localRoot))
		})
	}
}

// withRoot replaces the fixture root by "<ROOT>" in the texts of r.
func withRoot(r result.Result, root string) result.Result {
	out := r
	out.Content = append([]result.Content(nil), r.Content...)
	for i := range out.Content {
		out.Content[i].Text = strings.ReplaceAll(out.Content[i].Text, root, "<ROOT>")
	}
	return out
}

// fileTreeEntry is what the tree comparison looks at: kind, mode, owner and content or
// link target.
type fileTreeEntry struct {
	Mode     fs.FileMode
	Uid, Gid uint32
	Content  string
}

// snapshotTree records every entry under root except .git.
func snapshotTree(t *testing.T, root string) map[string]fileTreeEntry {
	t.Helper()
	out := map[string]fileTreeEntry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		e := fileTreeEntry{Mode: info.Mode()}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			e.Uid, e.Gid = st.Uid, st.Gid
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			e.Content = strings.ReplaceAll(target, root, "<ROOT>")
		case info.Mode().IsRegular() && info.Size() < 64<<20:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			e.Content = string(b)
		}
		out[rel] = e
		return nil
	})
	require.NoError(t, err)
	return out
}

// assertSameTrees checks that pi and we left identical trees behind.
func assertSameTrees(t *testing.T, f fileFixture) {
	t.Helper()
	want, got := snapshotTree(t, f.oracleRoot), snapshotTree(t, f.localRoot)
	for p, w := range want {
		g, ok := got[p]
		if !assert.True(t, ok, "missing %s", p) {
			continue
		}
		assert.Equal(t, w.Mode, g.Mode, "mode of %s", p)
		assert.Equal(t, [2]uint32{w.Uid, w.Gid}, [2]uint32{g.Uid, g.Gid}, "owner of %s", p)
		if w.Content != g.Content {
			assert.Failf(t, "content differs", "%s: pi wrote %q, we wrote %q", p, clipText(w.Content), clipText(g.Content))
		}
	}
	for p := range got {
		_, ok := want[p]
		assert.True(t, ok, "unexpected %s", p)
	}
}

func clipText(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
