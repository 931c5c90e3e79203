//go:build e2e

package conformance

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFindAsFdDoesIt covers what pi's find owes to fd itself: a limit fd cannot parse
// (String(limit + 1) in exponent notation, or past 64 bits), fd's smart case on globs
// (decided and applied on bytes: only ASCII letters fold, and a character of
// U+0080–U+07BF counts as uppercase), pi's --ignore-case for lowercase path patterns,
// and names holding "\r" or "\n", which pi's line reader splits into several results.
func TestFindAsFdDoesIt(t *testing.T) {
	root := t.TempDir()
	gitInit(t, root)
	for _, name := range []string{
		"Éclair.txt", "éclair2.txt", "straße.txt", "STRASSE.txt", "ÄB/x.txt", "Sub/Ünï.txt", "Sub/Low.txt",
		"cr\rname.txt", "lf\nname.txt", "crlf\r\nend.txt", "trail\r", "ǅ.txt", "ß.TXT", "İ.txt", "ı.txt",
		"日本.txt", "ИМЯ.txt", "имя2.txt", "Readme.MD", "readme2.md",
	} {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, nil, 0o644))
	}
	require.NoError(t, os.Mkdir(filepath.Join(root, "dir\rx"), 0o755))
	var calls []Call
	for _, limit := range []float64{1e21, 1e300, 1e20, 18446744073709551615, 4294967296, 9007199254740993, 1.5, 2} {
		calls = append(calls, Call{"find", root, map[string]any{"pattern": "*.txt", "limit": limit}})
	}
	calls = append(calls, Call{"find", root, map[string]any{"pattern": "*.txt", "limit": math.MaxFloat64}})
	for _, p := range []string{
		"éclair*", "Éclair*", "ÉCLAIR*", "straße*", "STRASSE*", "äb/*", "ÄB/*", "sub/ü*", "sub/*", "SUB/*", "**/ünï*",
		"ǆ*", "ǅ*", "ß*", "İ*", "ı*", "I*", "日本*", "имя*", "ИМЯ*", "readme*", "README*", "*.md", "*.MD",
		"cr*", "*name*", "lf*", "crlf*", "trail*", "dir*", "*end*",
	} {
		calls = append(calls, Call{"find", root, map[string]any{"pattern": p}})
	}
	want := oracle(t, calls)
	for i, c := range calls {
		t.Run(jsonArgs(t, c.Args), func(t *testing.T) {
			compareOrderFree(t, want[i], local(t, c))
		})
	}
}
