package review

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sums is a checksum of every entry under dir, .git included: content, mode, link target.
func sums(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		h := sha256.New()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			h.Write([]byte("link:" + target))
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			h.Write(b)
		}
		out[rel] = fi.Mode().String() + " " + hex.EncodeToString(h.Sum(nil))
		return nil
	}))
	return out
}

// changed lists the entries that differ between two sums.
func changed(before, after map[string]string) []string {
	var out []string
	for p, s := range after {
		if before[p] != s {
			out = append(out, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

var landBase = map[string]spec{
	"keep.txt":     {content: "keep\n"},
	"edit.txt":     {content: "old\n"},
	"gone.txt":     {content: "bye\n"},
	"from.txt":     {content: strings.Repeat("rename me\n", 20)},
	"run.sh":       {content: "echo\n"},
	"dir/deep.txt": {content: "d\n"},
}

var landHead = map[string]spec{
	"keep.txt":       {content: "keep\n"},
	"edit.txt":       {content: "new\n"},
	"to dir/to.txt":  {content: strings.Repeat("rename me\n", 20)},
	"run.sh":         {content: "echo\n", exec: true},
	"dir/deep.txt":   {content: "d2\n"},
	"bin.dat":        {content: "\x00\x01\x02"},
	"link":           {link: "keep.txt"},
	"ünï\ncode.txt":  {content: "u\n"},
	"Makefile":       {content: "all:\n\techo pwned\n"},
	"nested/a/b.txt": {content: "b\n"},
}

func TestLandSubsetWritesExactlyThose(t *testing.T) {
	ctx := context.Background()
	c, g := fixture(t, landBase, landHead)
	before := sums(t, c.Root)
	var out bytes.Buffer
	landed, err := Land(ctx, g, c, Selection{Paths: []string{"edit.txt", "dir", "to dir/to.txt"}}, &out)
	require.NoError(t, err)
	var work []string
	for _, p := range changed(before, sums(t, c.Root)) {
		if !strings.HasPrefix(p, ".git/") {
			work = append(work, p)
			continue
		}
		// git's own store gains the record (objects, the ref, its log), nothing else.
		assert.Regexp(t, `^\.git/(objects|refs|logs)/`, p)
	}
	assert.Equal(t, []string{"dir/deep.txt", "edit.txt", "from.txt", "to dir", "to dir/to.txt"}, work)
	assert.Equal(t, "new\n", read(t, c.Root, "edit.txt"))
	assert.Equal(t, "d2\n", read(t, c.Root, "dir/deep.txt"))
	assert.NoFileExists(t, filepath.Join(c.Root, "from.txt"))
	assert.Contains(t, out.String(), "wrote edit.txt (4 bytes)\n")
	assert.Contains(t, out.String(), "deleted from.txt (renamed)\n")
	assert.Len(t, landed.Files, 3)

	// The next review shows only what is left.
	c.Base = gitCmd(t, []string{"GIT_DIR=" + c.GitDir}, "", "rev-parse", c.BaseRef)
	assert.Equal(t, landed.Base, c.Base)
	files, err := Files(ctx, g, c)
	require.NoError(t, err)
	assert.Len(t, files, len(changesOf(t))-3)
	for _, f := range files {
		assert.NotContains(t, []string{"edit.txt", "dir/deep.txt", "to dir/to.txt"}, f.Path)
	}
	assert.Equal(t, len(files), landed.Left)
}

// changesOf is the number of changes between landBase and landHead.
func changesOf(t *testing.T) []File {
	c, g := fixture(t, landBase, landHead)
	files, err := Files(context.Background(), g, c)
	require.NoError(t, err)
	return files
}

func read(t *testing.T, root, p string) string {
	b, err := os.ReadFile(filepath.Join(root, p))
	require.NoError(t, err)
	return string(b)
}

// TestLandAllThenNamedMatchesHead: --all lands everything but the flagged files, which
// then land by name; the host tree is then Head's tree exactly (snapshotted the same way).
func TestLandAllThenNamedMatchesHead(t *testing.T) {
	ctx := context.Background()
	// Besides landBase's: a directory that empties, and names git's tree order is
	// particular about ("a-b" sorts before the directory "a", which sorts as "a/").
	base := map[string]spec{"old dir/x.txt": {content: "x\n"}, "sort/a-b": {content: "1"}}
	head := map[string]spec{"sort/a-b": {content: "2"}, "sort/a/c": {content: "3"}, "sort/a.b": {content: "4"}}
	for p, s := range landBase {
		base[p] = s
	}
	for p, s := range landHead {
		head[p] = s
	}
	c, g := fixture(t, base, head)
	var out bytes.Buffer
	landed, err := Land(ctx, g, c, Selection{All: true}, &out)
	require.NoError(t, err)
	var held []string
	for _, f := range landed.Held {
		held = append(held, f.Path)
	}
	assert.ElementsMatch(t, []string{"Makefile", "run.sh"}, held)
	assert.Equal(t, "echo\n", read(t, c.Root, "run.sh"))
	fi, err := os.Stat(filepath.Join(c.Root, "run.sh"))
	require.NoError(t, err)
	assert.Zero(t, fi.Mode().Perm()&0o111, "the flagged +x was not landed")
	assert.NoFileExists(t, filepath.Join(c.Root, "Makefile"))

	c.Base = landed.Base
	last, err := Land(ctx, g, c, Selection{Paths: []string{"Makefile", "run.sh"}}, &out)
	require.NoError(t, err)
	assert.NoDirExists(t, filepath.Join(c.Root, "old dir"), "a directory landing emptied is gone")
	assert.Contains(t, out.String(), "wrote run.sh (5 bytes, executable)\n")
	assert.Contains(t, out.String(), "linked link -> keep.txt\n")
	assert.Contains(t, out.String(), `wrote "ünï\ncode.txt" (2 bytes)`)
	require.NoError(t, os.RemoveAll(filepath.Join(c.Root, "nested-none")))
	hostTree := gitCmd(t, []string{"GIT_DIR=" + c.GitDir}, "", "rev-parse", snapshotWithoutGit(t, c)+"^{tree}")
	headTree := gitCmd(t, []string{"GIT_DIR=" + c.GitDir}, "", "rev-parse", c.Head+"^{tree}")
	assert.Equal(t, headTree, hostTree, "the host tree is Head's")
	recorded := gitCmd(t, []string{"GIT_DIR=" + c.GitDir}, "", "rev-parse", last.Base+"^{tree}")
	assert.Equal(t, headTree, recorded, "what land recorded is Head's tree: nothing is left to land")
	gitCmd(t, []string{"GIT_DIR=" + c.GitDir}, "", "fsck", "--strict", "--no-dangling")
}

// snapshotWithoutGit commits the host tree (.git aside).
func snapshotWithoutGit(t *testing.T, c Changes) string {
	return snapshot(t, c.GitDir, c.Root)
}

func TestLandRefuses(t *testing.T) {
	cases := []struct {
		name    string
		sel     Selection
		meddle  func(t *testing.T, root string)
		refused map[string]string
	}{
		{"a host edit since the start", Selection{Paths: []string{"edit.txt", "dir"}},
			func(t *testing.T, root string) { tree(t, root, map[string]spec{"edit.txt": {content: "host edit\n"}}) },
			map[string]string{"edit.txt": "changed on the host since the sandbox started"}},
		{"a host file deleted", Selection{All: true},
			func(t *testing.T, root string) { require.NoError(t, os.Remove(filepath.Join(root, "gone.txt"))) },
			map[string]string{"gone.txt": "deleted on the host since the sandbox started"}},
		{"a host file where the sandbox adds one", Selection{Paths: []string{"bin.dat"}},
			func(t *testing.T, root string) { tree(t, root, map[string]spec{"bin.dat": {content: "mine"}}) },
			map[string]string{"bin.dat": "exists on the host but did not when the sandbox started"}},
		{"a host chmod", Selection{Paths: []string{"edit.txt"}},
			func(t *testing.T, root string) { require.NoError(t, os.Chmod(filepath.Join(root, "edit.txt"), 0o755)) },
			map[string]string{"edit.txt": "its executable bit changed on the host since the sandbox started"}},
		{"a directory that became a symlink", Selection{Paths: []string{"nested"}},
			func(t *testing.T, root string) {
				require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(root, "nested")))
			},
			map[string]string{"nested/a/b.txt": "the directory nested is a symlink on the host"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, g := fixture(t, landBase, landHead)
			tc.meddle(t, c.Root)
			before := sums(t, c.Root)
			var out bytes.Buffer
			_, err := Land(context.Background(), g, c, tc.sel, &out)
			var re *RefusedError
			require.True(t, errors.As(err, &re), "%v", err)
			got := map[string]string{}
			for _, r := range re.Refusals {
				got[r.Path] = r.Why
			}
			assert.Equal(t, tc.refused, got)
			assert.Empty(t, changed(before, sums(t, c.Root)), "nothing was written")
			assert.Empty(t, out.String())
			assert.Equal(t, c.Base, gitCmd(t, []string{"GIT_DIR=" + c.GitDir}, "", "rev-parse", c.BaseRef), "nothing recorded")
			for p := range tc.refused {
				assert.Contains(t, err.Error(), p)
			}
		})
	}
}

func TestLandUnknownPath(t *testing.T) {
	c, g := fixture(t, landBase, landHead)
	_, err := Land(context.Background(), g, c, Selection{Paths: []string{"keep.txt", "nope"}}, &bytes.Buffer{})
	require.Error(t, err)
	assert.Equal(t, "no change to land at keep.txt, nope (see pi-sbx-backend review)", err.Error())
}

// TestNothingOfTheWorkspaceRuns: hooks, an fsmonitor, filters and diff drivers that the
// repository's config and attributes name never run during review and land.
func TestNothingOfTheWorkspaceRuns(t *testing.T) {
	ctx := context.Background()
	c, g := fixture(t, landBase, landHead)
	marker := filepath.Join(t.TempDir(), "ran")
	script := "#!/bin/sh\necho \"$0\" >> " + marker + "\ncat\n"
	hooks := filepath.Join(c.GitDir, "hooks")
	for _, h := range []string{"reference-transaction", "post-checkout", "pre-commit", "post-commit", "post-index-change"} {
		require.NoError(t, os.WriteFile(filepath.Join(hooks, h), []byte(script), 0o755))
	}
	drv := filepath.Join(t.TempDir(), "drv")
	require.NoError(t, os.WriteFile(drv, []byte(script), 0o755))
	env := []string{"GIT_DIR=" + c.GitDir}
	for _, kv := range [][2]string{{"core.fsmonitor", drv}, {"filter.x.clean", drv}, {"filter.x.smudge", drv},
		{"diff.x.textconv", drv}, {"diff.x.command", drv}, {"diff.external", drv}} {
		gitCmd(t, env, "", "config", kv[0], kv[1])
	}
	require.NoError(t, os.WriteFile(filepath.Join(c.GitDir, "info", "attributes"), []byte("* filter=x diff=x\n"), 0o644))
	tree(t, c.Root, map[string]spec{".gitattributes": {content: "* filter=x diff=x\n"}})
	// The host's own .gitattributes is a host change since the start; land others.
	files, err := Files(ctx, g, c)
	require.NoError(t, err)
	require.NoError(t, Write(ctx, &bytes.Buffer{}, g, c, files))
	_, err = Land(ctx, g, c, Selection{All: true, Paths: []string{"Makefile"}}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.NoFileExists(t, marker, "a hook, the fsmonitor, a filter or a diff driver ran")
	assert.Equal(t, "new\n", read(t, c.Root, "edit.txt"))
}

// TestLandHead: a land that names the work it reviewed refuses, writing nothing, once the
// work has moved on (or when named by its commit, which changes at each collect); the
// same work, even in another commit (a 7-digit prefix is enough), lands.
func TestLandHead(t *testing.T) {
	c, g := fixture(t, landBase, landHead)
	before := sums(t, c.Root)
	c, err := WorkID(context.Background(), g, c)
	require.NoError(t, err)
	for _, head := range []string{strings.Repeat("0", 40), c.Work[:6], c.Head[:7]} {
		_, err := Land(context.Background(), g, c, Selection{Paths: []string{"edit.txt"}, Head: head}, &bytes.Buffer{})
		assert.ErrorIs(t, err, ErrHeadMoved, head)
	}
	assert.Empty(t, changed(before, sums(t, c.Root)))
	// Another commit of the same tree (the sandbox's work committed again) is the same work.
	c.Head = gitCmd(t, []string{"GIT_DIR=" + c.GitDir}, "", "commit-tree", c.Work, "-m", "again")
	_, err = Land(context.Background(), g, c, Selection{Paths: []string{"edit.txt"}, Head: strings.ToUpper(c.Work[:7])}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, "new\n", read(t, c.Root, "edit.txt"))
}

// TestCatBlobs: the blobs come in the order asked, each whole; a missing one stops it.
func TestCatBlobs(t *testing.T) {
	c, g := fixture(t, landBase, landHead)
	ctx := context.Background()
	files, err := Files(ctx, g, c)
	require.NoError(t, err)
	var ids []string
	for _, f := range files {
		if f.NewID != "" {
			ids = append(ids, f.NewID)
		}
	}
	got := map[int]string{}
	require.NoError(t, catBlobs(ctx, g, ids, func(i int, size int64, r io.Reader) error {
		b, err := io.ReadAll(r)
		got[i] = string(b)
		assert.Equal(t, size, int64(len(b)))
		return err
	}))
	for i, id := range ids {
		want, err := blob(ctx, g, id, 1<<20)
		require.NoError(t, err)
		assert.Equal(t, string(want), got[i])
	}
	missing := strings.Repeat("1", len(ids[0]))
	n := 0
	err = catBlobs(ctx, g, []string{ids[0], missing, ids[1]}, func(int, int64, io.Reader) error { n++; return nil })
	assert.ErrorContains(t, err, "git answered \""+missing+" missing\"")
	assert.Equal(t, 1, n, "nothing after the missing one")
}

// TestApplyChecksAgainAtTheLastMoment: a host edit made after land's first check (while
// it writes) is not overwritten: the write stops before its rename, and leaves nothing.
func TestApplyChecksAgainAtTheLastMoment(t *testing.T) {
	ctx := context.Background()
	c, g := fixture(t, landBase, landHead)
	files, err := Files(ctx, g, c)
	require.NoError(t, err)
	root, err := os.OpenRoot(c.Root)
	require.NoError(t, err)
	defer root.Close()
	for _, name := range []string{"edit.txt", "to dir/to.txt"} {
		f := byPath(files)[name]
		meddle := filepath.Join(c.Root, f.Path)
		if f.Status == Renamed {
			meddle = filepath.Join(c.Root, f.OldPath) // its old path changes meanwhile
		}
		require.NoError(t, os.WriteFile(meddle, []byte("edited during the land\n"), 0o644))
		before := sums(t, c.Root)
		content, err := blob(ctx, g, f.NewID, 1<<20)
		require.NoError(t, err)
		var out bytes.Buffer
		err = apply(ctx, g, root, f, int64(len(content)), bytes.NewReader(content), &out)
		assert.ErrorContains(t, err, "changed on the host since the sandbox started", name)
		assert.Empty(t, changed(before, sums(t, c.Root)), "%s: nothing written, no temporary file left", name)
		assert.Empty(t, out.String())
	}
}

// TestTwoLandsKeepBothRecords: a land whose Base is stale (another land moved the ref
// meanwhile) records on top of the other's: the next review shows neither.
func TestTwoLandsKeepBothRecords(t *testing.T) {
	ctx := context.Background()
	c, g := fixture(t, landBase, landHead)
	first := c
	_, err := Land(ctx, g, first, Selection{Paths: []string{"edit.txt"}}, &bytes.Buffer{})
	require.NoError(t, err)
	_, err = Land(ctx, g, c, Selection{Paths: []string{"dir"}}, &bytes.Buffer{}) // c.Base is the old one
	require.NoError(t, err)
	c.Base = gitCmd(t, []string{"GIT_DIR=" + c.GitDir}, "", "rev-parse", c.BaseRef)
	files, err := Files(ctx, g, c)
	require.NoError(t, err)
	for _, f := range files {
		assert.NotContains(t, []string{"edit.txt", "dir/deep.txt"}, f.Path)
	}
	assert.Len(t, files, len(changesOf(t))-2)
}
