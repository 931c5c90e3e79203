//go:build e2e

package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// lsTrickyNames exercise pi's sort — a.toLowerCase().localeCompare(b.toLowerCase()), ICU
// root collation — where byte order differs: punctuation, digits, accents, '_' vs '-',
// dotfiles, scripts and emoji. No two names are equal once lowercased, since pi keeps
// such ties in readdir order, which the filesystem decides.
var lsTrickyNames = []string{
	"a", "B", "_x", "-y", "Zeta", "zeta2", "10", "9", "1_0", "1-0", "é", "e", "f", ".dot",
	"..dd", "~tilde", "#hash", "a b", "a-b", "a_b", "a.b", "aB", "ä", "Å", "ß", "ss", "日本",
	"中文", "😀", "Ωmega", "ωmega2", "İstanbul", "résumé", "resume", "file10", "file2",
	"File1", "(paren)", "[br]", "{cb}", "@at", "!bang", "$dollar", "%pct", "&amp", "+plus",
	"=eq", "^caret", "`tick", "'quote", ",comma", ";semi", "ﬁle", "Ǆ", "ǆx", "ŉ", "𝔸", "ａ",
	"x\u0301", "\u00e1", "a\u0300", "Ærø", "œuvre", "Čapek", "cz", "Łódź", "lz", "ÿ", "y",
	".Hidden", ".git2", "README.md", "readme.txt", "Makefile", "go.mod", "go.sum",
}

func TestLsMatchesPi(t *testing.T) {
	root := t.TempDir()
	gitInit(t, root)
	tricky := filepath.Join(root, "tricky")
	for i, name := range lsTrickyNames {
		if i%5 == 0 {
			require.NoError(t, os.MkdirAll(filepath.Join(tricky, name), 0o755))
			continue
		}
		writeTree(t, tricky, map[string]string{name: "x"})
	}
	writeTree(t, root, map[string]string{
		"links/target/":     "",
		"links/file.txt":    "x",
		"links/to-dir":      "->target",
		"links/to-file":     "->file.txt",
		"links/broken":      "->nowhere",
		"links/.hidden":     "x",
		"empty/":            "",
		"only-broken/dead":  "->gone",
		"plain.txt":         "x",
		"spaced dir/a b.md": "x",
	})
	// A name that is not valid UTF-8: Node decodes it with U+FFFD, stat fails, pi skips it.
	require.NoError(t, os.WriteFile(filepath.Join(root, "links", "bad\xff.txt"), nil, 0o644))
	many := filepath.Join(root, "many")
	for i := 0; i < 120; i++ {
		writeTree(t, many, map[string]string{fmt.Sprintf("n%03d", i): ""})
	}
	wide := filepath.Join(root, "wide")
	for i := 0; i < 230; i++ {
		writeTree(t, wide, map[string]string{fmt.Sprintf("%03d-%s", i, strings.Repeat("w", 240)): ""})
	}

	cases := []searchCase{
		{name: "tricky names", args: map[string]any{"path": "tricky"}},
		{name: "cwd default", args: map[string]any{}},
		{name: "links", args: map[string]any{"path": "links"}},
		{name: "path is a link to a directory", args: map[string]any{"path": "links/to-dir"}},
		{name: "path is a broken link", args: map[string]any{"path": "links/broken"}},
		{name: "empty", args: map[string]any{"path": "empty"}},
		{name: "only broken link", args: map[string]any{"path": "only-broken"}},
		{name: "spaces", args: map[string]any{"path": "spaced dir"}},
		{name: "at prefix", args: map[string]any{"path": "@links"}},
		{name: "absolute", args: map[string]any{"path": tricky}},
		{name: "limit", args: map[string]any{"path": "many", "limit": 7}},
		{name: "limit exact", args: map[string]any{"path": "many", "limit": 120}},
		{name: "limit fraction", args: map[string]any{"path": "many", "limit": 2.9}},
		{name: "limit zero", args: map[string]any{"path": "many", "limit": 0}},
		{name: "limit negative", args: map[string]any{"path": "many", "limit": -3}},
		{name: "default limit", args: map[string]any{"path": "many"}},
		{name: "50KB", args: map[string]any{"path": "wide"}},
		{name: "50KB and limit", args: map[string]any{"path": "wide", "limit": 225}},
		{name: "missing", args: map[string]any{"path": "nope"}},
		{name: "not a directory", args: map[string]any{"path": "plain.txt"}},
		{name: "dot dot", args: map[string]any{"path": "tricky/.."}},
	}
	for i := range cases {
		cases[i].tool, cases[i].cwd = "ls", root
	}
	runSearchCases(t, cases)
}

// TestLsLowercasesAsNode covers the lowercasing half of pi's sort: capitals Unicode 16
// and 17 added (Go's tables are Unicode 15's), and final sigma, which makes "ΟΔΟΣ"
// "οδος", not "οδοσ" — so it no longer ties with "οδοσ". Each directory holds one class:
// where those scripts go among others is the collation tables' part (docs/conformance.md).
func TestLsLowercasesAsNode(t *testing.T) {
	var calls []Call
	for _, names := range [][]string{
		{"\u1C89b", "\u1C8Aa"}, {"\uA7CCb", "\uA7CDa"}, {"\uA7DCb", "\u019Ba"},
		{"\U00010D50b", "\U00010D70a"}, {"\U00016EA0b", "\U00016EBBa"},
		{"ΟΔΟΣ", "οδοσ", "ΑΣ.txt", "ασ.txt2", "ΑΣ-x", "ας-x2", "ΑΣ'", "ασ'2"},
	} {
		dir := t.TempDir()
		for _, name := range names {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o644))
		}
		calls = append(calls, Call{"ls", dir, map[string]any{}})
	}
	want := oracle(t, calls)
	for i, c := range calls {
		require.Equal(t, want[i], local(t, c), "ls of %v", c.Cwd)
	}
}
