package fsops

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLayers: each package of fsops imports, of this module, only what its doc comment
// says: the internal packages nothing of sandboxes or protocols and each other only
// downward (fileio and rxsyntax at the bottom), fsops itself its internal packages and
// pi's rules. Test files count too: a test may not reach around the layering either
// (the tests' own helpers, internal/testbin, aside).
func TestLayers(t *testing.T) {
	const module = "github.com/pi-sbx/pi-sbx-backend/"
	allowed := map[string][]string{
		".":                   {"internal/vm/fsops/internal/collation", "internal/vm/fsops/internal/editengine", "internal/vm/fsops/internal/fileio", "internal/vm/fsops/internal/grepmatch", "internal/vm/fsops/internal/image", "internal/vm/fsops/internal/walk", "internal/wire/pi/js", "internal/wire/pi/result", "internal/wire/pi/truncate", "internal/vm/fsops"},
		"internal/collation":  {},
		"internal/fileio":     {},
		"internal/rxsyntax":   {},
		"internal/grepmatch":  {"internal/vm/fsops/internal/fileio", "internal/vm/fsops/internal/rxsyntax"},
		"internal/walk":       {"internal/vm/fsops/internal/fileio"},
		"internal/editengine": {"internal/vm/fsops/internal/fileio"},
		"internal/image":      {"internal/vm/fsops/internal/fileio", "internal/wire/pi/js", "internal/wire/pi/result"},
	}
	dirs, err := filepath.Glob("internal/*")
	require.NoError(t, err)
	var want []string
	for d := range allowed {
		if d != "." {
			want = append(want, d)
		}
	}
	sort.Strings(want)
	assert.Equal(t, want, dirs, "every internal package has its entry here")
	for dir, ok := range allowed {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		require.NotEmpty(t, files, dir)
		for _, f := range files {
			src, err := os.ReadFile(f)
			require.NoError(t, err)
			ast, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
			require.NoError(t, err)
			for _, imp := range ast.Imports {
				path, err := strconv.Unquote(imp.Path.Value)
				require.NoError(t, err)
				if rel, mine := strings.CutPrefix(path, module); mine && !(rel == "internal/testbin" && strings.HasSuffix(f, "_test.go")) {
					assert.Contains(t, ok, rel, "%s imports %s", f, path)
				}
			}
		}
	}
}
