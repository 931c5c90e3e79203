//go:build e2e

package conformance

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
)

// TestEditMatchesPi compares pi 1.6.0's edit with ours: the result text, details.diff,
// details.patch and details.firstChangedLine, every error text, and the files left behind.
func TestEditMatchesPi(t *testing.T) {
	f := newFileFixture(t, buildEditTree)
	e := func(path string, pairs ...string) map[string]any {
		var edits []any
		for i := 0; i+1 < len(pairs); i += 2 {
			edits = append(edits, map[string]any{"oldText": pairs[i], "newText": pairs[i+1]})
		}
		return map[string]any{"path": path, "edits": edits}
	}
	c := func(name string, args map[string]any) fileCase { return fileCase{name: name, tool: "edit", args: args} }
	cases := []fileCase{
		c("single (reference §9)", e("a.txt", "line2", "LINE2")),
		c("multiple", e("multi.txt", "alpha", "ALPHA", "gamma", "GAMMA", "epsilon", "EPSILON")),
		c("multiple out of order", e("multi2.txt", "epsilon", "E", "alpha", "A")),
		c("legacy top-level oldText/newText", map[string]any{"path": "legacy.txt", "oldText": "old", "newText": "new"}),
		c("legacy plus edits", map[string]any{"path": "legacy2.txt", "oldText": "one", "newText": "1",
			"edits": []any{map[string]any{"oldText": "three", "newText": "3"}}}),
		c("edits as a JSON string", map[string]any{"path": "json.txt", "edits": `[{"oldText":"x = 1","newText":"x = 2"}]`}),
		c("edits as a JSON string of one object", map[string]any{"path": "json.txt", "edits": `{"oldText":"y = 1","newText":"y = 2"}`}),
		c("edits as a single object", map[string]any{"path": "json.txt", "edits": map[string]any{"oldText": "z = 1", "newText": "z = 2"}}),
		c("empty edits", map[string]any{"path": "a.txt", "edits": []any{}}),
		c("not found", e("a.txt", "nope", "x")),
		c("not found (multi)", e("a.txt", "foo", "FOO", "nope", "x")),
		c("duplicate", e("dup.txt", "same", "x")),
		c("duplicate (multi)", e("dup.txt", "first", "1", "same", "x")),
		c("overlap", e("multi.txt", "ALPHA\nbeta", "x", "beta\nGAMMA", "y")),
		c("nested overlap", e("multi.txt", "beta", "x", "eta", "y")),
		c("no change", e("a.txt", "foo", "foo")),
		c("no change (multi)", e("a.txt", "foo", "foo", "bar", "bar")),
		c("empty oldText", e("a.txt", "", "x")),
		c("empty oldText (multi)", e("a.txt", "foo", "x", "", "y")),
		c("whitespace-only oldText", e("a.txt", " ", "_")),
		c("CRLF file, multi-line newText", e("crlf.txt", "second\nthird", "2nd\nnew line\n3rd")),
		c("CRLF file, oldText with CRLF", e("crlf2.txt", "b\r\nc", "B\r\nC")),
		c("mixed line endings", e("mixed.txt", "two\nthree", "2\n3\n3.5")),
		c("lone CR file", e("cr.txt", "b\nc", "B\nX\nC")),
		c("BOM kept", e("bom.txt", "with bom", "still with bom")),
		c("BOM and CRLF", e("bomcrlf.txt", "y", "Y\nZ")),
		c("fuzzy: smart quotes", e("fuzzy-quotes.txt", `say "hello" and 'bye'`, `say "hi"`)),
		c("fuzzy: trailing whitespace", e("fuzzy-trailing.txt", "keep this\nand this", "changed\nlines")),
		c("fuzzy: dashes and NBSP", e("fuzzy-dash.txt", "a - b c", "a + b")),
		c("fuzzy: NFKC", e("fuzzy-nfkc.txt", "ABC123", "abc")),
		c("fuzzy plus exact in one call", e("fuzzy-mixed.txt", "plain", "PLAIN", `"quoted"`, "QUOTED")),
		c("fuzzy with CRLF", e("fuzzy-crlf.txt", "it's here", "it is here")),
		c("fuzzy duplicate", e("fuzzy-dup.txt", `"x"`, "y")),
		c("middle of a long file", e("long.txt", "row 250\n", "row 250 changed\n")),
		c("far apart edits (two windows)", e("long2.txt", "row 10\n", "ten\n", "row 400\n", "four hundred\n")),
		c("close edits (merged windows)", e("long3.txt", "row 100\n", "hundred\n", "row 140\n", "one-forty\n")),
		c("first line", e("long4.txt", "row 1\n", "first\n")),
		c("last line without newline", e("nonl.txt", "last", "LAST")),
		c("append at end without newline", e("nonl2.txt", "end", "end\nmore")),
		c("delete lines", e("long5.txt", "row 20\nrow 21\nrow 22\n", "")),
		c("insert many lines", e("long6.txt", "row 50\n", strings.Repeat("inserted\n", 40))),
		c("repeated lines", e("repeat.txt", "x\nx\nunique\nx\n", "x\nunique\nx\nx\nx\n")),
		c("whole file", e("whole.txt", "only\ncontent\n", "replaced\n")),
		c("to empty file", e("toempty.txt", "gone", "")),
		c("wide numbers", e("lines1200.txt", "row 999\n", "row 999!\nrow 999.5\n")),
		c("Unicode path and text", e("ünï cødé/日本.txt", "こんにちは", "さようなら")),
		c("dot-dot path", e("../outside.txt", "outside", "OUTSIDE")),
		c("absolute path", e("<ROOT>/work/abs.txt", "abs", "ABS")),
		c("@ prefix", e("@at.txt", "at", "AT")),
		c("symlink", e("link.txt", "through", "THROUGH")),
		c("hard-linked file", e("hard.txt", "shared", "SHARED")),
		c("missing", e("missing.txt", "a", "b")),
		c("symlink loop", e("loop1", "a", "b")),
		c("missing directory", e("nodir/x.txt", "a", "b")),
		c("directory", e("sub", "a", "b")),
		c("through a file", e("a.txt/x", "a", "b")),
		c("2 GB sparse file", e("huge.bin", "a", "b")),
		{
			name: "invalid UTF-8", tool: "edit", args: e("latin1.txt", "caf", "CAF"),
			diff: "pi decodes invalid UTF-8 as U+FFFD and writes that back, corrupting every byte it could not decode; we refuse and leave the file untouched",
			check: func(t *testing.T, want, got result.Result) {
				assert.False(t, want.IsError, "pi edits the file")
				assert.True(t, got.IsError, "we refuse")
				require.Len(t, got.Content, 1)
				assert.Contains(t, got.Content[0].Text, "not valid UTF-8")
				b, err := os.ReadFile(filepath.Join(f.localRoot, "work", "latin1.txt"))
				require.NoError(t, err)
				assert.Equal(t, latin1, string(b), "file untouched")
			},
		},
	}
	cases = append(cases, randomEdits(rand.New(rand.NewSource(2)), 120)...)
	cases = append(cases, spreadEdits(rand.New(rand.NewSource(4)), 40)...)
	runFileCases(t, f, cases)
	// The invalid UTF-8 file is the one intended difference in the files left behind.
	os.Remove(filepath.Join(f.oracleRoot, "work", "latin1.txt"))
	os.Remove(filepath.Join(f.localRoot, "work", "latin1.txt"))
	assertSameTrees(t, f)
}

const latin1 = "caf\xe9 cr\xe8me\n"

func buildEditTree(root string) {
	s := func(rel, data string) {
		p := filepath.Join(root, "work", rel)
		must(os.MkdirAll(filepath.Dir(p), 0o755))
		must(os.WriteFile(p, []byte(data), 0o644))
	}
	rows := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "row %d\n", i)
		}
		return b.String()
	}
	s("a.txt", "line1\nline2\r\nfoo bar\n")
	s("multi.txt", "alpha\nbeta\ngamma\ndelta\nepsilon\n")
	s("multi2.txt", "alpha\nbeta\ngamma\ndelta\nepsilon\n")
	s("legacy.txt", "the old value\n")
	s("legacy2.txt", "one\ntwo\nthree\n")
	s("json.txt", "x = 1\ny = 1\nz = 1\n")
	s("dup.txt", "first\nsame\nsame\n")
	s("crlf.txt", "first\r\nsecond\r\nthird\r\nfourth\r\n")
	s("crlf2.txt", "a\r\nb\r\nc\r\nd\r\n")
	s("mixed.txt", "one\r\ntwo\nthree\r\nfour\n")
	s("cr.txt", "a\rb\rc\rd\r")
	s("bom.txt", "\uFEFFwith bom\nsecond\n")
	s("bomcrlf.txt", "\uFEFFx\r\ny\r\nz\r\n")
	s("fuzzy-quotes.txt", "before\nsay \u201chello\u201d and \u2018bye\u2019\nafter\n")
	s("fuzzy-trailing.txt", "top\nkeep this   \nand this\t\nbottom\n")
	s("fuzzy-dash.txt", "x\na \u2013 b\u00a0c\ny\n")
	s("fuzzy-nfkc.txt", "start\n\uff21\uff22\uff23\uff11\uff12\uff13\nend\n")
	s("fuzzy-mixed.txt", "plain line\n\u201cquoted\u201d line  \nother\n")
	s("fuzzy-crlf.txt", "one\r\nit\u2019s here   \r\nthree\r\n")
	s("fuzzy-dup.txt", "\u201cx\u201d\n\"x\"\n")
	for _, n := range []string{"long.txt", "long2.txt", "long3.txt", "long4.txt", "long5.txt", "long6.txt"} {
		s(n, rows(500))
	}
	s("nonl.txt", "first\nlast")
	s("nonl2.txt", "start\nend")
	s("repeat.txt", "x\nx\nx\nunique\nx\nx\nx\n")
	s("whole.txt", "only\ncontent\n")
	s("toempty.txt", "gone")
	s("lines1200.txt", rows(1200))
	s("ünï cødé/日本.txt", "こんにちは世界\n")
	must(os.WriteFile(filepath.Join(root, "outside.txt"), []byte("outside the cwd\n"), 0o644))
	s("abs.txt", "abs\n")
	s("at.txt", "at\n")
	s("target.txt", "through the link\n")
	must(os.Symlink("target.txt", filepath.Join(root, "work", "link.txt")))
	must(os.MkdirAll(filepath.Join(root, "work", "sub"), 0o755))
	s("hard.txt", "shared content\n")
	must(os.Link(filepath.Join(root, "work", "hard.txt"), filepath.Join(root, "work", "hard-other-name.txt")))
	s("latin1.txt", latin1)
	huge := filepath.Join(root, "work", "huge.bin")
	must(os.WriteFile(huge, nil, 0o644))
	must(os.Truncate(huge, 2<<30))
	for i := 0; i < 120; i++ {
		s(fmt.Sprintf("rand/%03d.txt", i), randomText(rand.New(rand.NewSource(int64(1000+i)))))
	}
	for i := 0; i < 40; i++ {
		s(fmt.Sprintf("spread/%02d.txt", i), spreadText(i))
	}
}

// randomPieces are the building blocks of generated files and edits: repeated and unique
// lines, blank lines, CRLF, trailing spaces and typographic characters that only match
// fuzzily.
var randomPieces = []string{"a\n", "b\n", "a\n", "\n", "foo bar\n", "x\r\n", "  indented\n", "tail  \n",
	"\u201cq\u201d\n", "dash \u2013 here\n", "caf\u00e9\n", "end"}

func randomText(rng *rand.Rand) string {
	var b strings.Builder
	n := 1 + rng.Intn(60)
	for i := 0; i < n; i++ {
		b.WriteString(randomPieces[rng.Intn(len(randomPieces)-1)])
		if rng.Intn(8) == 0 {
			fmt.Fprintf(&b, "unique %d\n", i)
		}
	}
	if rng.Intn(3) == 0 {
		b.WriteString("end")
	}
	return b.String()
}

// randomEdits makes edits of the generated files: slices of their text (which may be
// ambiguous, overlapping or fuzzy), replaced by other generated text. Both sides must
// agree on every outcome, success or error.
func randomEdits(rng *rand.Rand, n int) []fileCase {
	var out []fileCase
	for i := 0; i < n; i++ {
		text := randomText(rand.New(rand.NewSource(int64(1000 + i))))
		k := 1 + rng.Intn(3)
		var edits []any
		for j := 0; j < k; j++ {
			start := rng.Intn(len(text))
			end := min(len(text), start+1+rng.Intn(40))
			old := strings.ToValidUTF8(text[start:end], "")
			if rng.Intn(4) == 0 {
				old = strings.NewReplacer("\u201c", `"`, "\u201d", `"`, "\u2013", "-", "\r\n", "\n").Replace(old)
			}
			newText := randomText(rng)
			if len(newText) > 30 {
				newText = newText[:30]
			}
			edits = append(edits, map[string]any{"oldText": old, "newText": strings.ToValidUTF8(newText, "")})
		}
		out = append(out, fileCase{name: fmt.Sprintf("random %03d", i), tool: "edit",
			args: map[string]any{"path": fmt.Sprintf("rand/%03d.txt", i), "edits": edits}})
	}
	return out
}

// TestEditConcurrentProcesses starts many `tool --local edit` processes on one file at
// once, as the per-call transport does, each replacing its own marker. Every edit reads,
// changes and writes the whole file; without a lock shared between processes some would
// overwrite others' changes.
func TestEditConcurrentProcesses(t *testing.T) {
	dir := t.TempDir()
	const n = 24
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "slot %d: todo\n", i)
	}
	p := filepath.Join(dir, "shared.txt")
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
	cmds := make([]*exec.Cmd, n)
	for i := range cmds {
		args := fmt.Sprintf(`{"path":"shared.txt","edits":[{"oldText":"slot %d: todo","newText":"slot %d: done"}]}`, i, i)
		cmds[i] = exec.Command(binPath, "tool", "--local", "--cwd", dir, "edit", args)
		require.NoError(t, cmds[i].Start())
	}
	for i, c := range cmds {
		require.NoError(t, c.Wait(), "process %d", i)
	}
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, strings.ReplaceAll(b.String(), "todo", "done"), string(got), "no edit lost")
}

// spreadText is a 300-line file of mostly repeated lines with a unique anchor every few
// lines, for edits at distances around pi's 32-line diff window margin.
func spreadText(seed int) string {
	rng := rand.New(rand.NewSource(int64(seed)))
	var b strings.Builder
	for i := 0; i < 300; i++ {
		if i%3 == 0 {
			fmt.Fprintf(&b, "anchor %d\n", i)
		} else {
			b.WriteString([]string{"same\n", "other\n", "\n", "  same\n"}[rng.Intn(4)])
		}
	}
	return b.String()
}

// spreadEdits edit two to five anchors of a spread file each, with replacements that add,
// remove or repeat lines, so diff windows sometimes merge and sometimes do not.
func spreadEdits(rng *rand.Rand, n int) []fileCase {
	var out []fileCase
	for i := 0; i < n; i++ {
		k := 2 + rng.Intn(4)
		var edits []any
		used := map[int]bool{}
		for j := 0; j < k; j++ {
			a := 3 * rng.Intn(100)
			if used[a] || used[a-3] || used[a+3] {
				continue
			}
			used[a] = true
			var nt strings.Builder
			for l := rng.Intn(6); l > 0; l-- {
				nt.WriteString([]string{"same\n", "new\n", "\n", "other\n"}[rng.Intn(4)])
			}
			edits = append(edits, map[string]any{"oldText": fmt.Sprintf("anchor %d\n", a), "newText": nt.String()})
		}
		out = append(out, fileCase{name: fmt.Sprintf("spread %02d", i), tool: "edit",
			args: map[string]any{"path": fmt.Sprintf("spread/%02d.txt", i), "edits": edits}})
	}
	return out
}
