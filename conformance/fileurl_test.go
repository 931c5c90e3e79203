//go:build e2e

package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFileURLsAsPiTakesThem gives file:// URLs as paths: pi turns them into paths with
// Node's fileURLToPath, whose rules (host empty or localhost, no encoded "/", query and
// fragment dropped, percent-decoding, a drive letter in the host place) and messages
// ("Invalid URL", "URI malformed", …) we follow. Nothing here writes: both sides run in
// one tree.
func TestFileURLsAsPiTakesThem(t *testing.T) {
	dir := t.TempDir()
	gitInit(t, dir) // pi's find fails outside a repository with Debian's fd (docs/conformance.md)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hi\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	d := strings.TrimPrefix(dir, "/")
	urls := []string{
		"file:///D/a.txt", "file://localhost/D/a.txt", "file://LOCALHOST/D/a.txt", "file://%6cocalhost/D/a.txt",
		"file://host/D/a.txt", "file://[::1]/a", "file://xn--nxasmq6b/a", "file://ex%41mple.com/a", "file://1.2.3.4/a",
		"file://host:80/a", "file://user@host/a", "file://ho st/a", "file://h%20st/a", "file://h%zz/a",
		"file:///D/a%2Fb", "file:///D/a%2fb", "file:///D/%61.txt", "file:///D/a.txt?x=1#frag", "file:///D/a#b/c",
		"file:///D/%zz", "file:///D/%E0%A4%A", "file:///D/%C3%A9", "file:///D/%FF", "file:///D/sp ace", "file:///D/é",
		"file:///D/sub/../a.txt", "file:///D/sub/%2e%2e/a.txt", "file:///%2e%2e/D/a.txt", "file:///D/./a.txt",
		"file://", "file:///", "file:///D\\a.txt", "file:///D/a\n.txt", "file:///D/a\t.txt", " file:///D/a.txt",
		"file://C:/x", "file://c|/x", "file://C:", "file:///D/%00", "@file:///D/a.txt", "file:///D/a.txt%20",
	}
	var calls []Call
	for _, u := range urls {
		calls = append(calls, Call{"read", dir, map[string]any{"path": strings.ReplaceAll(u, "D", d)}})
	}
	for _, tool := range []string{"ls", "grep", "find"} {
		for _, u := range []string{"file:///D/sub", "file://host/D", "file:///D/a%2f", "file:///D/%zz"} {
			args := map[string]any{"path": strings.ReplaceAll(u, "D", d)}
			if tool != "ls" {
				args["pattern"] = "*"
			}
			calls = append(calls, Call{tool, dir, args})
		}
	}
	edit := []any{map[string]any{"oldText": "a", "newText": "b"}}
	for _, u := range []string{"file://host/D/a.txt", "file:///D/%zz", "file:///D/a%2F"} {
		p := strings.ReplaceAll(u, "D", d)
		calls = append(calls, Call{"write", dir, map[string]any{"path": p, "content": "x"}},
			Call{"edit", dir, map[string]any{"path": p, "edits": edit}})
	}
	want := oracle(t, calls)
	for i, c := range calls {
		t.Run(c.Tool+" "+jsonArgs(t, c.Args), func(t *testing.T) {
			got := local(t, c)
			assert.Equal(t, want[i].Content, got.Content)
			assert.Equal(t, want[i].IsError, got.IsError)
		})
	}
}
