//go:build e2e

package conformance

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNulBytesAsPiRefusesThem gives every tool a NUL byte where a path, pattern, glob
// or command goes: pi answers with Node's ERR_INVALID_ARG_VALUE (the argument named,
// its value shown by util.inspect: quoted, escaped, long ones split at line breaks and
// cut at 128 characters) or its own "Path not found"; so must we. None of these calls
// writes anything, so both run in the same tree.
func TestNulBytesAsPiRefusesThem(t *testing.T) {
	plain := t.TempDir() // not a git repository: find passes --no-require-git
	require.NoError(t, os.WriteFile(filepath.Join(plain, "a.txt"), []byte("hi\n"), 0o644))
	repo := t.TempDir()
	gitInit(t, repo)
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "src"), 0o755))
	long := "echo 'it''s' \"q\" \x00 \n second line that is long enough to pass the break length of eighty chars\n third"
	edit := []any{map[string]any{"oldText": "a", "newText": "b"}}
	calls := []Call{
		{"read", plain, map[string]any{"path": "a\x00b"}},
		{"read", plain, map[string]any{"path": "a.txt\x00"}},
		{"read", plain, map[string]any{"path": "it's \x00 \"q\" \t \x01 \x1f \x7f \u0085 é 😀 \\"}},
		{"read", plain, map[string]any{"path": "both ' \" \x00 ` ${x}"}},
		{"read", plain, map[string]any{"path": strings.Repeat("a", 200) + "\x00"}},
		{"read", plain, map[string]any{"path": "a\nb\x00" + strings.Repeat("c", 80)}},
		{"write", plain, map[string]any{"path": "d\x00/x.txt", "content": "x"}},
		{"write", plain, map[string]any{"path": "@x\x00.txt", "content": "x"}},
		{"edit", plain, map[string]any{"path": "a\x00b", "edits": edit}},
		{"grep", plain, map[string]any{"pattern": "h\x00i"}},
		{"grep", plain, map[string]any{"pattern": "hi", "path": "a\x00b"}},
		{"grep", plain, map[string]any{"pattern": "hi", "glob": "./*\x00"}},
		{"grep", plain, map[string]any{"pattern": "h\x00i", "glob": "*.txt", "ignoreCase": true, "literal": true, "context": 2}},
		{"grep", plain, map[string]any{"pattern": "h\x00i", "path": "a.txt"}},
		{"grep", plain, map[string]any{"pattern": "(unclosed\x00"}},
		{"find", plain, map[string]any{"pattern": "*\x00"}},
		{"find", plain, map[string]any{"pattern": "*", "path": "a\x00"}},
		{"find", repo, map[string]any{"pattern": "src/\x00*"}},
		{"find", repo, map[string]any{"pattern": "SRC/\x00*", "limit": 5}},
		{"find", repo, map[string]any{"pattern": "A\x00"}},
		{"find", repo, map[string]any{"pattern": "*", "path": "src\x00"}},
		{"ls", plain, map[string]any{"path": "a\x00b"}},
		{"bash", plain, map[string]any{"command": "echo a\x00b"}},
		{"bash", plain, map[string]any{"command": long}},
	}
	want := oracle(t, calls)
	for i, c := range calls {
		t.Run(c.Tool+" "+strings.ReplaceAll(jsonArgs(t, c.Args), "\\u0000", "NUL"), func(t *testing.T) {
			got := local(t, c)
			assert.Equal(t, want[i].Content, got.Content)
			assert.Equal(t, want[i].IsError, got.IsError)
		})
	}
}

func jsonArgs(t *testing.T, args map[string]any) string {
	t.Helper()
	b, err := json.Marshal(args)
	require.NoError(t, err)
	return string(b)
}
