package doccheck

import (
	"encoding/json"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
)

func pages(t *testing.T) (string, []string) {
	t.Helper()
	root := testbin.Root()
	p, err := Pages(root)
	require.NoError(t, err)
	require.Contains(t, p, "README.md")
	return root, p
}

// TestReadmeIsAFrontPage: the front page stays short; the manual is docs/.
func TestReadmeIsAFrontPage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testbin.Root(), "README.md"))
	require.NoError(t, err)
	lines := strings.Count(string(data), "\n")
	t.Logf("README.md: %d lines", lines)
	assert.LessOrEqual(t, lines, 200, "README.md is a front page: move the detail to docs/")
	assert.NotRegexp(t, `(?m)^\s*pi install npm:`, string(data), "the npm packages are not published: no block may tell a newcomer to install them")
}

// TestDocLinks: every relative link of README.md, CONTRIBUTING.md, security.md and docs/
// leads to a file of the repository, and its anchor to a heading there.
func TestDocLinks(t *testing.T) {
	root, p := pages(t)
	links, err := Links(root, p)
	require.NoError(t, err)
	for _, l := range links {
		assert.NoError(t, Check(root, l))
	}
	t.Logf("%d relative links in %d pages, all resolve", len(links), len(p))
	require.Greater(t, len(links), 20, "the pages link each other")
}

// TestEveryPageIsInTheIndex: a page under docs/ that docs/README.md does not link is one
// no reader finds.
func TestEveryPageIsInTheIndex(t *testing.T) {
	root := testbin.Root()
	p, err := UserPages(root)
	require.NoError(t, err)
	links, err := Links(root, []string{"docs/README.md"})
	require.NoError(t, err)
	linked := map[string]bool{}
	for _, l := range links {
		file, _, _ := strings.Cut(l.Target, "#")
		linked[filepath.ToSlash(filepath.Join("docs", file))] = true
	}
	for _, page := range p {
		if strings.HasPrefix(page, "docs/") && page != "docs/README.md" {
			assert.True(t, linked[page], "%s is not linked from docs/README.md, the index: add it under its reader", page)
		}
	}
}

// TestDocBlocks: every fenced block of README.md and docs/ is one of three kinds, so that none is
// left unchecked: a command the e2e doc test runs (```sh), a client configuration it
// runs by name (marked <!-- editor-config: NAME -->; JSON parsed here), or text shown
// (```text: output, syntax; ```json: an output's shape, parsed here) — and a block meant
// not to run says why (```sh no-run: why).
func TestDocBlocks(t *testing.T) {
	root := testbin.Root()
	p, err := UserPages(root)
	require.NoError(t, err)
	blocks, err := Blocks(root, p)
	require.NoError(t, err)
	counts := map[string]int{}
	for _, b := range blocks {
		if b.NoRunMarked {
			counts["no-run"]++
			assert.NotEmpty(t, b.NoRun, "%s: no-run needs a reason (```%s no-run: why)", b, b.Lang)
			continue
		}
		switch {
		case b.Config != "":
			counts["config"]++
			if b.Lang == "json" {
				assert.True(t, json.Valid([]byte(b.Text)), "%s: editor-config %s is not JSON", b, b.Config)
			} else {
				assert.Contains(t, []string{"sh", "toml"}, b.Lang, "%s: editor-config %s", b, b.Config)
			}
		case b.Lang == "sh":
			counts["run"]++
			assert.Contains(t, []string{"", "release"}, b.Needs, "%s: a block needs only what the e2e doc test gives (```sh release: a release's files)", b)
		case b.Lang == "text":
			counts["text"]++
		case b.Lang == "json":
			// Not a configuration: an output or a file's shape, shown; it must be JSON.
			counts["text"]++
			assert.True(t, json.Valid([]byte(b.Text)), "%s: a ```json block that is not JSON", b)
		default:
			t.Errorf("%s: a ```%s block that no test runs: make it ```sh (run), mark it <!-- editor-config: NAME --> or ```%s no-run: why", b, b.Lang, b.Lang)
		}
	}
	t.Logf("%d blocks: %d commands run, %d configurations run, %d text, %d no-run", len(blocks), counts["run"], counts["config"], counts["text"], counts["no-run"])
	assert.Positive(t, counts["run"], "some commands run")
}

// TestGoTestCommandsInDocs: every `go test` command the pages give names packages that
// exist and tests (benchmarks, fuzz targets) that are in them, with the build tags their
// files need — so that a reader who copies one runs what it says.
func TestGoTestCommandsInDocs(t *testing.T) {
	root, p := pages(t)
	cmds, err := GoTests(root, p)
	require.NoError(t, err)
	require.Greater(t, len(cmds), 20)
	funcs := map[string][]testFunc{}
	for _, c := range cmds {
		for _, problem := range checkGoTest(t, root, c, funcs) {
			t.Errorf("%s: %s", c, problem)
		}
	}
	t.Logf("%d go test commands checked", len(cmds))
}

// testFunc is a Test, Benchmark or Fuzz function and the constraint of its file.
type testFunc struct {
	name string
	file string
	expr constraint.Expr
}

// valueFlags are go test's flags that take a value as the next word.
var valueFlags = map[string]bool{"-tags": true, "-run": true, "-bench": true, "-benchtime": true, "-count": true, "-fuzz": true, "-timeout": true, "-fuzztime": true, "-cpu": true, "-exec": true, "-seed": true, "-pairs": true, "-p": true, "-parallel": true}

func checkGoTest(t *testing.T, root string, c GoTest, cache map[string][]testFunc) []string {
	var problems []string
	var pkgs []string
	flags := map[string]string{}
	for i := 0; i < len(c.Args); i++ {
		a := c.Args[i]
		name, value, hasValue := strings.Cut(a, "=")
		switch {
		case strings.HasPrefix(a, "-") && valueFlags[name] && !hasValue && i+1 < len(c.Args):
			flags[name] = c.Args[i+1]
			i++
		case strings.HasPrefix(a, "-"):
			flags[name] = value
		case strings.HasPrefix(a, "./") || a == ".":
			pkgs = append(pkgs, a)
		default:
			problems = append(problems, "unexpected word "+a)
		}
	}
	if len(pkgs) == 0 {
		return append(problems, "no package named (./path)")
	}
	tags := map[string]bool{"linux": true, "unix": true, runtime.GOARCH: true, "gc": true}
	for _, tag := range strings.Split(flags["-tags"], ",") {
		if tag != "" {
			tags[tag] = true
		}
	}
	var all []testFunc
	for _, pkg := range pkgs {
		dirs := packageDirs(root, pkg)
		if len(dirs) == 0 {
			problems = append(problems, "no package "+pkg)
		}
		for _, d := range dirs {
			if _, ok := cache[d]; !ok {
				cache[d] = testFuncs(t, d)
			}
			all = append(all, cache[d]...)
		}
	}
	for flag, prefix := range map[string]string{"-run": "Test", "-bench": "Benchmark", "-fuzz": "Fuzz"} {
		pattern, ok := flags[flag]
		if !ok || pattern == "^$" || pattern == "XXX" || pattern == "." {
			continue
		}
		for _, alt := range strings.Split(pattern, "|") {
			alt, _, _ = strings.Cut(alt, "/") // a subtest's path: its test is the first part
			re, err := regexp.Compile(alt)
			if err != nil {
				problems = append(problems, flag+" "+pattern+": "+err.Error())
				continue
			}
			found, tagged := false, ""
			for _, f := range all {
				if !strings.HasPrefix(f.name, prefix) || !re.MatchString(f.name) {
					continue
				}
				if f.expr == nil || f.expr.Eval(func(tag string) bool { return tags[tag] }) {
					found = true
					break
				}
				tagged = f.file + " (" + f.expr.String() + ")"
			}
			switch {
			case found:
			case tagged != "":
				problems = append(problems, flag+" "+alt+" matches only in "+tagged+": give -tags")
			default:
				problems = append(problems, flag+" "+alt+" matches no "+prefix+" function in "+strings.Join(pkgs, " "))
			}
		}
	}
	return problems
}

// packageDirs resolves a package pattern (./dir or ./dir/...) to the directories holding
// Go files.
func packageDirs(root, pkg string) []string {
	base, recursive := strings.CutSuffix(pkg, "/...")
	dir := filepath.Join(root, filepath.FromSlash(base))
	var dirs []string
	hasGo := func(d string) bool {
		m, _ := filepath.Glob(filepath.Join(d, "*.go"))
		return len(m) > 0
	}
	if !recursive {
		if hasGo(dir) {
			dirs = append(dirs, dir)
		}
		return dirs
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && p != dir {
			return filepath.SkipDir
		}
		if d.IsDir() && hasGo(p) {
			dirs = append(dirs, p)
		}
		return nil
	})
	return dirs
}

// testFuncs lists the Test, Benchmark and Fuzz functions of a directory's test files.
func testFuncs(t *testing.T, dir string) []testFunc {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	require.NoError(t, err)
	var out []testFunc
	for _, f := range files {
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ParseComments|parser.SkipObjectResolution)
		require.NoError(t, err)
		var expr constraint.Expr
		for _, cg := range af.Comments {
			if cg.Pos() > af.Package {
				break
			}
			for _, c := range cg.List {
				if constraint.IsGoBuild(c.Text) {
					expr, err = constraint.Parse(c.Text)
					require.NoError(t, err, f)
				}
			}
		}
		for _, d := range af.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				out = append(out, testFunc{name: fd.Name.Name, file: filepath.Base(f), expr: expr})
			}
		}
	}
	return out
}

// TestTestsNamedInDocsExist: every test a page names in a code span (`TestX`, or
// `internal/host/sbx/TestX` with its package's directory) is a function of that package's
// tests — or, named alone, of some package's — so that security.md's "guarantee → test"
// and the docs' proofs name tests that run.
func TestTestsNamedInDocsExist(t *testing.T) {
	root, p := pages(t)
	refs, err := TestRefs(root, p)
	require.NoError(t, err)
	require.Greater(t, len(refs), 50)
	byDir := map[string][]testFunc{}
	var dirs []string
	require.NoError(t, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	}))
	all := map[string]bool{}
	for _, d := range dirs {
		byDir[d] = testFuncs(t, d)
		for _, f := range byDir[d] {
			all[f.name] = true
		}
	}
	has := func(funcs map[string]bool, name string) bool {
		if prefix, ok := strings.CutSuffix(name, "*"); ok {
			for f := range funcs {
				if strings.HasPrefix(f, prefix) {
					return true
				}
			}
			return false
		}
		return funcs[name]
	}
	for _, r := range refs {
		if r.Dir == "" {
			assert.True(t, has(all, r.Name), "%s: no test of that name in the repository", r)
			continue
		}
		funcs, ok := byDir[filepath.Join(root, filepath.FromSlash(r.Dir))]
		if !assert.True(t, ok, "%s: no directory %s", r, r.Dir) {
			continue
		}
		names := map[string]bool{}
		for _, f := range funcs {
			names[f.name] = true
		}
		assert.True(t, has(names, r.Name), "%s: no such test in %s", r, r.Dir)
	}
	t.Logf("%d tests named in the docs, all found", len(refs))
}

func TestSlug(t *testing.T) {
	for _, tc := range []struct{ title, slug string }{
		{"Install", "install"},
		{"`serve`: the tools over MCP, running in a sandbox", "serve-the-tools-over-mcp-running-in-a-sandbox"},
		{"`scripts/serve.sh`", "scriptsservesh"},
		{"1. Only `sbx/` starts `sbx`, and the host path starts nothing else", "1-only-sbx-starts-sbx-and-the-host-path-starts-nothing-else"},
		{"Layout: host, VM, wire", "layout-host-vm-wire"},
		{"Review mode: nothing reaches the host — until you land it", "review-mode-nothing-reaches-the-host--until-you-land-it"},
		{"A release: `make release`", "a-release-make-release"},
	} {
		assert.Equal(t, tc.slug, Slug(tc.title), tc.title)
	}
}

func TestParsing(t *testing.T) {
	root := t.TempDir()
	page := "# Title\n\n## Same\n\n## Same\n\n" +
		"See [a](other.md#there), [b](#same-1), `[not](a-link.md)`, [web](https://x.example/).\n" +
		"Run `go test -tags e2e ./e2e -run\n'TestA|TestB'` then `go test ./x && echo ok`.\n" +
		"<!-- editor-config: vscode -->\n```json\n{\"a\": 1}\n```\n\n" +
		"```sh no-run: needs a Mac\nbrew install x\n```\n" +
		"```sh\necho [x](nolink.md)\ngo test ./y -run TestY # a comment\n```\n" +
		"```sh release\ntar -xzf x.tgz\n```\n"
	require.NoError(t, os.WriteFile(filepath.Join(root, "p.md"), []byte(page), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "other.md"), []byte("# There\n"), 0o644))

	blocks, err := Blocks(root, []string{"p.md"})
	require.NoError(t, err)
	require.Len(t, blocks, 4)
	assert.Equal(t, "release", blocks[3].Needs)
	assert.True(t, blocks[3].Runnable())
	assert.Equal(t, Block{Page: "p.md", Line: 11, Lang: "json", Config: "vscode", Text: "{\"a\": 1}\n"}, blocks[0])
	assert.Equal(t, Block{Page: "p.md", Line: 15, Lang: "sh", NoRun: "needs a Mac", NoRunMarked: true, Text: "brew install x\n"}, blocks[1])
	assert.True(t, blocks[2].Runnable())
	assert.False(t, blocks[1].Runnable())

	links, err := Links(root, []string{"p.md"})
	require.NoError(t, err)
	require.Equal(t, []Link{{"p.md", 7, "other.md#there"}, {"p.md", 7, "#same-1"}}, links)
	for _, l := range links {
		assert.NoError(t, Check(root, l))
	}
	for target, want := range map[string]string{
		"missing.md":    "no such file missing.md",
		"other.md#nope": "other.md has no heading #nope",
		"#same-2":       "p.md has no heading #same-2",
		"../outside.md": "leads outside the repository",
	} {
		err := Check(root, Link{Page: "p.md", Line: 1, Target: target})
		require.Error(t, err, target)
		assert.Contains(t, err.Error(), want)
	}

	cmds, err := GoTests(root, []string{"p.md"})
	require.NoError(t, err)
	var got [][]string
	for _, c := range cmds {
		got = append(got, c.Args)
	}
	assert.ElementsMatch(t, [][]string{
		{"-tags", "e2e", "./e2e", "-run", "TestA|TestB"},
		{"./x"},
		{"./y", "-run", "TestY"},
	}, got)
}
