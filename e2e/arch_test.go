package e2e

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOnlySbxStartsProcessesOnTheHostPath checks the host side's imports: of the
// packages serve runs on the host, only sbx/ may start processes, none may open network
// connections or use a Docker client, and serve/tool --sandbox never use the local tool
// runner. (The behaviour is proven by the e2e tests; this keeps a refactor from quietly
// adding another door.)
func TestOnlySbxStartsProcessesOnTheHostPath(t *testing.T) {
	forbidden := map[string][]string{
		"agent":   {"os/exec", "net", "net/http", "syscall"},
		"backend": {"os/exec", "net", "net/http", "syscall"},
		"sbx":     {"net", "net/http"},
	}
	for dir, bad := range forbidden {
		for path, imports := range importsOf(t, filepath.Join("..", dir)) {
			if dir != "sbx" {
				src, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.NotContains(t, string(src), "StartProcess", path)
			}
			for _, imp := range imports {
				assert.NotContains(t, bad, imp, "%s imports %s", path, imp)
				assert.False(t, strings.HasPrefix(imp, "github.com/docker/"), "%s imports a Docker client (%s)", path, imp)
			}
		}
	}
	for _, f := range []string{"serve.go", "session.go", "shell.go", "tool_sandbox.go"} {
		src, err := os.ReadFile(filepath.Join("..", "cmd/pi-sbx-backend", f))
		require.NoError(t, err)
		assert.NotContains(t, string(src), "backend.Local", "%s must not run tools on the host", f)
		assert.NotContains(t, string(src), "os/exec", f)
	}
	mod, err := os.ReadFile("../go.mod")
	require.NoError(t, err)
	assert.NotContains(t, string(mod), "github.com/docker/", "no Docker client library in the module")
}

// importsOf returns the imports of every non-test Go file in dir.
func importsOf(t *testing.T, dir string) map[string][]string {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	require.NotEmpty(t, files, dir)
	out := map[string][]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			out[f] = append(out[f], p)
		}
	}
	return out
}
