package review

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// numbered is lines "line 1\n" … "line n\n", with the lines of edits replaced.
func numbered(n int, edits map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if e, ok := edits[i]; ok {
			b.WriteString(e)
			continue
		}
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// threeHunks: a file of 40 lines changed far apart in three places (git's three lines of
// context keep them apart): a line replaced, a line added, the last line's newline gone.
var (
	hunkOld = numbered(40, nil)
	hunkNew = numbered(40, map[int]string{
		3:  "line three\n",
		20: "line 20\nan added line\n",
		40: "line 40, no newline",
	})
)

func TestParseAndApplyHunks(t *testing.T) {
	c, g := fixture(t, map[string]spec{"f.txt": {content: hunkOld}}, map[string]spec{"f.txt": {content: hunkNew}})
	files, err := Files(context.Background(), g, c)
	require.NoError(t, err)
	require.Len(t, files, 1)
	hunks, err := Hunks(context.Background(), g, c, files[0])
	require.NoError(t, err)
	require.Len(t, hunks, 3)
	assert.Equal(t, [][2]int{{1, 1}, {1, 0}, {1, 1}}, [][2]int{{hunks[0].Added, hunks[0].Removed}, {hunks[1].Added, hunks[1].Removed}, {hunks[2].Added, hunks[2].Removed}})
	assert.True(t, strings.HasPrefix(hunks[1].Text, hunks[1].Header+"\n+") || strings.Contains(hunks[1].Text, "\n+an added line\n"), hunks[1].Text)

	cases := []struct {
		chosen []int
		want   string
	}{
		{nil, hunkOld},
		{[]int{1}, numbered(40, map[int]string{3: "line three\n"})},
		{[]int{2}, numbered(40, map[int]string{20: "line 20\nan added line\n"})},
		{[]int{3}, numbered(40, map[int]string{40: "line 40, no newline"})},
		{[]int{1, 3}, numbered(40, map[int]string{3: "line three\n", 40: "line 40, no newline"})},
		{[]int{1, 2, 3}, hunkNew},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.chosen), func(t *testing.T) {
			want := map[int]bool{}
			for _, n := range tc.chosen {
				want[n] = true
			}
			got, err := ApplyHunks([]byte(hunkOld), hunks, want)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
	// Hunks that are not the file's diff are refused, never applied somewhere else.
	_, err = ApplyHunks([]byte(numbered(40, map[int]string{3: "other\n"})), hunks, map[int]bool{1: true})
	assert.ErrorContains(t, err, "hunk 1 does not match the file at line 3")
	_, err = ApplyHunks([]byte(numbered(10, nil)), hunks, map[int]bool{1: true})
	assert.ErrorContains(t, err, "does not fit the file")
}

func TestParseHunksEdges(t *testing.T) {
	cases := []struct {
		name, patch string
		old, new    string // both sides with every hunk applied, from empty files
		err         string
	}{
		{name: "from nothing", patch: "@@ -0,0 +1,2 @@\n+a\n+b\n", old: "", new: "a\nb\n"},
		{name: "a content line that looks like a header", patch: "@@ -1 +1 @@\n-@@ -1 +1 @@\n+x\n", old: "@@ -1 +1 @@\n", new: "x\n"},
		{name: "no newline on both sides", patch: "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n", old: "a", new: "b"},
		{name: "cut short", patch: "@@ -1,2 +1,2 @@\n-a\n", err: "hunk 1 ends early"},
		{name: "longer than its header", patch: "@@ -1 +1 @@\n-a\n-b\n+c\n", err: "longer than its header"},
		{name: "bad header", patch: "@@ -x +1 @@\n", err: "hunk header"},
		{name: "garbage after", patch: "@@ -1 +1 @@\n-a\n+b\nnonsense\n", err: "unexpected line"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hunks, err := ParseHunks([]byte("diff --git a/f b/f\n--- a/f\n+++ b/f\n" + tc.patch))
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			all := map[int]bool{}
			for _, h := range hunks {
				all[h.N] = true
			}
			got, err := ApplyHunks([]byte(tc.old), hunks, all)
			require.NoError(t, err)
			assert.Equal(t, tc.new, string(got))
			got, err = ApplyHunks([]byte(tc.old), hunks, nil)
			require.NoError(t, err)
			assert.Equal(t, tc.old, string(got))
		})
	}
}

func TestParseHunkList(t *testing.T) {
	cases := []struct {
		in   string
		want []int
		err  string
	}{
		{in: "2", want: []int{2}},
		{in: "3,1", want: []int{1, 3}},
		{in: "1, 3-5", want: []int{1, 3, 4, 5}},
		{in: "", err: `"" is not a hunk number`},
		{in: "1,,2", err: `"" is not a hunk number`},
		{in: "a", err: `"a" is not a hunk number`},
		{in: "+2", err: `"+2" is not a hunk number`},
		{in: "-2", err: `"-2" is not a hunk number`},
		{in: "0", err: "numbered from 1"},
		{in: "4-2", err: "goes backwards"},
		{in: "1,2,1", err: "hunk 1 is named twice"},
		{in: "1-3,2", err: "hunk 2 is named twice"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseHunkList(tc.in)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				assert.NotContains(t, err.Error(), "\n")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestLandHunksMovesTheBase: landing hunk 2 writes Base + hunk 2; the review then shows
// the other two, renumbered 1 and 2, and landing them makes Head's file.
func TestLandHunksMovesTheBase(t *testing.T) {
	ctx := context.Background()
	c, g := fixture(t, map[string]spec{"f.txt": {content: hunkOld}, "other.txt": {content: "o\n"}},
		map[string]spec{"f.txt": {content: hunkNew}, "other.txt": {content: "o2\n"}})
	var out bytes.Buffer
	landed, err := Land(ctx, g, c, Selection{Paths: []string{"f.txt"}, Hunks: []int{2}}, &out)
	require.NoError(t, err)
	assert.Equal(t, numbered(40, map[int]string{20: "line 20\nan added line\n"}), read(t, c.Root, "f.txt"))
	assert.Equal(t, "o\n", read(t, c.Root, "other.txt"))
	assert.Equal(t, 2, landed.HunksLeft)
	assert.Equal(t, 2, landed.Left) // f.txt's other hunks and other.txt
	require.Len(t, landed.Files, 1)
	assert.Equal(t, [2]int{1, 0}, [2]int{landed.Files[0].Added, landed.Files[0].Removed})
	assert.Contains(t, out.String(), "wrote f.txt (")

	c.Base = gitCmd(t, []string{"GIT_DIR=" + c.GitDir}, "", "rev-parse", c.BaseRef)
	assert.Equal(t, landed.Base, c.Base)
	files, err := Files(ctx, g, c)
	require.NoError(t, err)
	f := byPath(files)["f.txt"]
	hunks, err := Hunks(ctx, g, c, f)
	require.NoError(t, err)
	require.Len(t, hunks, 2)
	assert.Contains(t, hunks[0].Text, "+line three\n")
	assert.Contains(t, hunks[1].Text, "+line 40, no newline\n")
	var review bytes.Buffer
	require.NoError(t, Write(ctx, &review, g, c, files))
	assert.Regexp(t, `(?m)^@@ -\d+,\d+ \+\d+,\d+ @@ \[hunk 1\]`, review.String())
	assert.Regexp(t, `(?m)^@@ -\d+,\d+ \+\d+,\d+ @@ \[hunk 2\]`, review.String())
	assert.NotContains(t, review.String(), "[hunk 3]")
	assert.NotContains(t, review.String(), "+an added line")

	// The rest still lands, by hunk, then the whole file is Head's.
	landed, err = Land(ctx, g, c, Selection{Paths: []string{"f.txt"}, Hunks: []int{2}, HunkBase: f.OldID}, &out)
	require.NoError(t, err)
	assert.Equal(t, 1, landed.HunksLeft)
	c.Base = landed.Base
	landed, err = Land(ctx, g, c, Selection{Paths: []string{"f.txt"}, Hunks: []int{1}}, &out)
	require.NoError(t, err)
	assert.Equal(t, 0, landed.HunksLeft)
	assert.Equal(t, hunkNew, read(t, c.Root, "f.txt"))
	c.Base = landed.Base
	files, err = Files(ctx, g, c)
	require.NoError(t, err)
	assert.Equal(t, []string{"other.txt"}, pathsOf(files))
}

func pathsOf(files []File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

// TestLandHunksRefuses: bad selections and files without hunks write nothing and say
// why on one line; a host file changed since the start is refused by name.
func TestLandHunksRefuses(t *testing.T) {
	base := map[string]spec{
		"f.txt": {content: hunkOld}, "bin.dat": {content: "\x00a\n"}, "gone.txt": {content: "g\n"},
		"run.sh": {content: "echo\n"}, "old.txt": {content: strings.Repeat("same\n", 20)},
		"dir/a.txt": {content: "a\n"}, "link": {link: "f.txt"},
	}
	head := map[string]spec{
		"f.txt": {content: hunkNew}, "bin.dat": {content: "\x00b\n"}, "new.txt": {content: "n\n"},
		"run.sh": {content: "echo 2\n", exec: true}, "renamed.txt": {content: strings.Repeat("same\n", 20)},
		"dir/a.txt": {content: "a2\n"}, "link": {link: "other"},
	}
	cases := []struct {
		name string
		sel  Selection
		host func(t *testing.T, root string) // a change on the host first
		err  string
	}{
		{name: "out of range", sel: Selection{Paths: []string{"f.txt"}, Hunks: []int{4}}, err: "f.txt has 3 hunk(s): there is no hunk 4"},
		{name: "zero", sel: Selection{Paths: []string{"f.txt"}, Hunks: []int{0}}, err: "there is no hunk 0"},
		{name: "twice", sel: Selection{Paths: []string{"f.txt"}, Hunks: []int{1, 1}}, err: "hunk 1 is named twice"},
		{name: "two files", sel: Selection{Paths: []string{"f.txt", "dir/a.txt"}, Hunks: []int{1}}, err: "name exactly that file"},
		{name: "all", sel: Selection{All: true, Paths: []string{"f.txt"}, Hunks: []int{1}}, err: "without --all"},
		{name: "a directory", sel: Selection{Paths: []string{"dir"}, Hunks: []int{1}}, err: "dir is not a changed file"},
		{name: "unknown", sel: Selection{Paths: []string{"nope.txt"}, Hunks: []int{1}}, err: "no change to land at nope.txt"},
		{name: "new file", sel: Selection{Paths: []string{"new.txt"}, Hunks: []int{1}}, err: "new.txt is a new file: land it whole"},
		{name: "deleted", sel: Selection{Paths: []string{"gone.txt"}, Hunks: []int{1}}, err: "gone.txt is deleted in the sandbox"},
		{name: "renamed", sel: Selection{Paths: []string{"renamed.txt"}, Hunks: []int{1}}, err: "renamed.txt is renamed in the sandbox"},
		{name: "binary", sel: Selection{Paths: []string{"bin.dat"}, Hunks: []int{1}}, err: "bin.dat is a binary file"},
		{name: "mode", sel: Selection{Paths: []string{"run.sh"}, Hunks: []int{1}}, err: "run.sh is changed with its executable bit: land it whole"},
		{name: "symlink", sel: Selection{Paths: []string{"link"}, Hunks: []int{1}}, err: "link is not a regular file on both sides"},
		{name: "base moved", sel: Selection{Paths: []string{"f.txt"}, Hunks: []int{1}, HunkBase: strings.Repeat("0", 40)}, err: "changed since its hunks were numbered"},
		{
			name: "host changed", sel: Selection{Paths: []string{"f.txt"}, Hunks: []int{1}},
			host: func(t *testing.T, root string) {
				require.NoError(t, os.WriteFile(filepath.Join(root, "f.txt"), []byte(hunkOld+"host\n"), 0o644))
			},
			err: "nothing landed: f.txt: changed on the host since the sandbox started",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, g := fixture(t, base, head)
			if tc.host != nil {
				tc.host(t, c.Root)
			}
			before := sums(t, c.Root)
			baseRef := gitCmd(t, []string{"GIT_DIR=" + c.GitDir}, "", "rev-parse", c.BaseRef)
			_, err := Land(context.Background(), g, c, tc.sel, &bytes.Buffer{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
			assert.NotContains(t, err.Error(), "\n")
			if tc.name == "host changed" {
				var refused *RefusedError
				assert.True(t, errors.As(err, &refused))
			}
			// Nothing written: the tree (a stored blob is not a change of it) and the record.
			var work []string
			for _, p := range changed(before, sums(t, c.Root)) {
				if !strings.HasPrefix(p, ".git/objects") && p != ".git" && p != ".git/objects" {
					work = append(work, p)
				}
			}
			assert.Empty(t, work)
			assert.Equal(t, baseRef, gitCmd(t, []string{"GIT_DIR=" + c.GitDir}, "", "rev-parse", c.BaseRef))
		})
	}
}

// TestLandAllHunksIsTheFile: every hunk named lands Head's own blob.
func TestLandAllHunksIsTheFile(t *testing.T) {
	c, g := fixture(t, map[string]spec{"f.txt": {content: hunkOld}}, map[string]spec{"f.txt": {content: hunkNew}})
	landed, err := Land(context.Background(), g, c, Selection{Paths: []string{"f.txt"}, Hunks: []int{3, 1, 2}}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, hunkNew, read(t, c.Root, "f.txt"))
	assert.Equal(t, 0, landed.Left)
	assert.Equal(t, 0, landed.HunksLeft)
}

// TestLandHunksOfCalls: with a journal's span (Base the checkpoint before the calls,
// the land recorded on the real base, as land --calls does it) the hunks are the span's
// and the record moves the real base for that file alone.
func TestLandHunksOfCalls(t *testing.T) {
	ctx := context.Background()
	base := map[string]spec{"f.txt": {content: hunkOld}, "other.txt": {content: "o\n"}}
	c, g := fixture(t, base, map[string]spec{"f.txt": {content: hunkNew}, "other.txt": {content: "o2\n"}})
	// The checkpoint before the calls: other.txt changed by an earlier call, f.txt not.
	scratch := t.TempDir()
	tree(t, scratch, map[string]spec{"f.txt": {content: hunkOld}, "other.txt": {content: "o2\n"}})
	span := c
	span.Base, span.RecordBase = snapshot(t, c.GitDir, scratch), c.Base
	landed, err := Land(ctx, g, span, Selection{Paths: []string{"f.txt"}, Hunks: []int{3}}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, numbered(40, map[int]string{40: "line 40, no newline"}), read(t, c.Root, "f.txt"))
	assert.Equal(t, "o\n", read(t, c.Root, "other.txt"))
	start := c.Base
	c.Base = gitCmd(t, []string{"GIT_DIR=" + c.GitDir}, "", "rev-parse", c.BaseRef)
	assert.Equal(t, landed.Base, c.Base)
	assert.Equal(t, start, gitCmd(t, []string{"GIT_DIR=" + c.GitDir}, "", "rev-parse", c.Base+"^"), "recorded on the real base")
	files, err := Files(ctx, g, c)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"f.txt", "other.txt"}, pathsOf(files))
	hunks, err := Hunks(ctx, g, c, byPath(files)["f.txt"])
	require.NoError(t, err)
	require.Len(t, hunks, 2, "hunks 1 and 2 are left")
	assert.NotContains(t, hunks[1].Text, "no newline")
}
