package e2e

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/pi-sbx/pi-sbx-backend"

// hostPackages are the packages serve, shell, tool --sandbox, verify and gc run on the
// host.
var hostPackages = []string{"mcpserver", "agentlink", "jsonwire", "session", "sbx", "tools", "deploy", "review", "hostgit"}

// gitDoor is the one package besides sbx/ that starts a process on the host: git, on the
// object store the sandbox's work was fetched into, with hooks, fsmonitor, drivers and
// the user's GIT_* variables kept out (security.md, section 13).
const gitDoor = "hostgit"

// hostFiles are the files of cmd/pi-sbx-backend that implement host subcommands. The
// command is one binary (it is also the agent), so these files are held to the host rules
// by their own imports and those imports' dependencies.
var hostFiles = []string{"serve.go", "sandbox.go", "shell.go", "tool_sandbox.go", "deploy.go", "verify.go", "gc.go", "review.go"}

// vmOnly are the packages that only the in-sandbox agent (and tool --local) may link.
var vmOnly = []string{module + "/fsops", module + "/shell", module + "/terminal", module + "/vmagent", module + "/cmd/sbxsim", module + "/sbxsim"}

// TestHostPathLinksNoVMCode: everything the host side links, transitively (go list
// -deps), is free of the tool implementations (fsops, shell, vmagent) and of the
// simulator; and the VM side links no sbx.
func TestHostPathLinksNoVMCode(t *testing.T) {
	deps := listDeps(t, hostRoots(t)...)
	for _, bad := range vmOnly {
		_, linked := deps[bad]
		assert.False(t, linked, "the host path links %s (imported by %s)", bad, importers(deps, bad))
	}
	for _, vm := range []string{"./fsops", "./shell", "./vmagent"} {
		for pkg := range listDeps(t, vm) {
			assert.NotEqual(t, module+"/sbx", pkg, "%s links sbx", vm)
		}
	}
	// Descriptions are plain data: no protocol, no wire format, no implementation.
	for pkg := range listDeps(t, "./tools") {
		for _, bad := range []string{"/mcpserver", "/jsonwire", "/agentlink", "/vmagent", "/fsops", "/shell", "/sbx"} {
			assert.NotEqual(t, module+bad, pkg, "tools links %s", pkg)
		}
	}
}

// TestOnlySbxStartsProcessesOnTheHostPath: of the project's packages the host links, only
// sbx/ (and hostgit/, which runs git) starts processes (os/exec, os.StartProcess, syscall exec); none but deploy's
// docker_curl opens network connections; nothing uses a Docker client. (The behaviour is
// proven by the e2e tests; this keeps a refactor from quietly adding another door.)
func TestOnlySbxStartsProcessesOnTheHostPath(t *testing.T) {
	deps := listDeps(t, hostRoots(t)...)
	checked := 0
	for pkg, d := range deps {
		if !strings.HasPrefix(pkg, module) {
			for _, imp := range d.imports {
				assert.False(t, strings.HasPrefix(imp, "github.com/docker/"), "%s imports a Docker client (%s)", pkg, imp)
			}
			continue
		}
		checked++
		rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		for _, f := range d.files {
			path := filepath.Join(d.dir, f)
			imports := fileImports(t, path)
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			if rel != "sbx" && rel != gitDoor {
				assert.NotContains(t, imports, "os/exec", "%s starts processes", path)
				for _, call := range []string{"StartProcess", "ForkExec", "syscall.Exec", "unix.Exec"} {
					assert.NotContains(t, string(src), call, "%s starts processes", path)
				}
			}
			netOK := rel == "deploy" && f == "curl.go"
			if !netOK {
				for _, n := range []string{"net", "net/http", "net/rpc", "net/smtp"} {
					assert.NotContains(t, imports, n, "%s opens network connections", path)
				}
			}
			for _, imp := range imports {
				assert.False(t, strings.HasPrefix(imp, "github.com/docker/"), "%s imports a Docker client (%s)", path, imp)
			}
		}
	}
	assert.GreaterOrEqual(t, checked, 5, "the host path's own packages were checked")
	for _, f := range existingHostFiles(t) {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.NotContains(t, string(src), "vmagent.", "%s must not run tools on the host", f)
		assert.NotContains(t, fileImports(t, f), "os/exec", f)
	}
	mod, err := os.ReadFile("../go.mod")
	require.NoError(t, err)
	assert.NotContains(t, string(mod), "github.com/docker/", "no Docker client library in the module")
}

// TestLayerRules: what each package must not link, transitively (README's layout
// table, last column).
func TestLayerRules(t *testing.T) {
	impl := []string{"fsops", "shell", "vmagent"}
	rules := map[string][]string{
		"session":   impl,
		"keep":      append([]string{"session", "mcpserver", "agentlink", "deploy"}, impl...),
		"mcpserver": append([]string{"sbx", "agentlink", "session"}, impl...),
		"agentlink": append([]string{"session", "deploy"}, impl...),
		"deploy":    append([]string{"agentlink", "session"}, impl...),
		"vmagent":   {"sbx", "agentlink", "session", "deploy"},
		"tools":     append([]string{"mcpserver", "jsonwire", "agentlink", "session", "sbx", "deploy"}, impl...),
		"fsops":     {"mcpserver", "jsonwire", "agentlink", "session", "sbx", "deploy", "tools", "vmagent", "shell"},
		"shell":     {"mcpserver", "jsonwire", "agentlink", "session", "sbx", "deploy", "tools", "vmagent", "fsops"},
		"terminal":  {"mcpserver", "jsonwire", "agentlink", "session", "sbx", "deploy", "tools", "vmagent", "fsops"},
		"pi/result": {"tools", "mcpserver", "fsops", "shell"},
		// review knows two commits in a host object store, not sandboxes or protocols.
		"review":  append([]string{"sbx", "session", "agentlink", "mcpserver", "jsonwire", "deploy", "tools"}, impl...),
		"hostgit": {"sbx", "session", "agentlink", "mcpserver", "jsonwire", "deploy", "tools", "review", "fsops", "shell", "vmagent"},
	}
	for pkg, banned := range rules {
		deps := listDeps(t, "./"+pkg)
		for d := range deps {
			rel, ours := strings.CutPrefix(d, module+"/")
			if !ours {
				continue
			}
			for _, b := range banned {
				assert.False(t, rel == b || strings.HasPrefix(rel, b+"/"), "%s links %s (imported by %s)", pkg, rel, importers(deps, d))
			}
		}
	}
	for d := range listDeps(t, "./jsonwire") {
		_, ours := strings.CutPrefix(d, module+"/")
		assert.False(t, ours && d != module+"/jsonwire", "jsonwire links %s", d)
	}
}

// TestOnlySbxAndShellStartProcesses: in the whole module outside the simulator (and the
// tests' builder, internal/testbin), only sbx/ (the sbx CLI, on the host), hostgit/ (git
// on the host, for review and land) and shell/ (commands, in the VM) start processes.
func TestOnlySbxAndShellStartProcesses(t *testing.T) {
	deps := listDeps(t, "./...")
	checked := 0
	for pkg, d := range deps {
		rel, ours := strings.CutPrefix(pkg, module+"/")
		assert.NotContains(t, d.imports, module+"/internal/testbin", "%s links the tests' builder", pkg)
		// internal/testbin builds the programs for tests (go build); nothing else links it.
		if !ours || rel == "sbx" || rel == gitDoor || rel == "shell" || rel == "sbxsim" || strings.HasPrefix(rel, "sbxsim/") || rel == "cmd/sbxsim" || rel == "internal/testbin" {
			continue
		}
		checked++
		for _, f := range d.files {
			path := filepath.Join(d.dir, f)
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.NotContains(t, fileImports(t, path), "os/exec", "%s starts processes", path)
			for _, call := range []string{"StartProcess", "ForkExec", "syscall.Exec", "unix.Exec"} {
				assert.NotContains(t, string(src), call, "%s starts processes", path)
			}
		}
	}
	assert.GreaterOrEqual(t, checked, 10, "the module's packages were checked")
}

// hostRoots are the host packages that exist plus the project packages the host files
// of cmd/pi-sbx-backend import; those files must not import VM-only packages themselves.
func hostRoots(t *testing.T) []string {
	var roots []string
	for _, p := range hostPackages {
		if _, err := os.Stat(filepath.Join("..", p)); err == nil {
			roots = append(roots, "./"+p)
		}
	}
	require.Len(t, roots, len(hostPackages), "a host package moved; update hostPackages")
	for _, f := range existingHostFiles(t) {
		for _, imp := range fileImports(t, f) {
			for _, bad := range vmOnly {
				assert.NotEqual(t, bad, imp, "%s imports %s", f, bad)
			}
			if strings.HasPrefix(imp, module+"/") {
				roots = append(roots, "./"+strings.TrimPrefix(imp, module+"/"))
			}
		}
	}
	return roots
}

func existingHostFiles(t *testing.T) []string {
	var out []string
	for _, f := range hostFiles {
		p := filepath.Join("..", "cmd/pi-sbx-backend", f)
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	require.GreaterOrEqual(t, len(out), 4, "the host subcommand files moved; update hostFiles")
	return out
}

type pkgInfo struct {
	dir     string
	files   []string
	imports []string
}

// listDeps runs `go list -deps` on roots (from the module root) and returns every
// package linked, with its non-test Go files and imports.
func listDeps(t *testing.T, roots ...string) map[string]pkgInfo {
	t.Helper()
	args := append([]string{"list", "-deps", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \" \"}}\t{{join .Imports \" \"}}"}, roots...)
	cmd := exec.Command("go", args...)
	cmd.Dir = ".."
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Fatalf("go list: %v\n%s", err, ee.Stderr)
	}
	require.NoError(t, err)
	deps := map[string]pkgInfo{}
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		f := strings.Split(line, "\t")
		require.Len(t, f, 4, line)
		deps[f[0]] = pkgInfo{dir: f[1], files: strings.Fields(f[2]), imports: strings.Fields(f[3])}
	}
	return deps
}

// importers names the packages of deps that import pkg (for a readable failure).
func importers(deps map[string]pkgInfo, pkg string) []string {
	var out []string
	for p, d := range deps {
		for _, imp := range d.imports {
			if imp == pkg {
				out = append(out, p)
			}
		}
	}
	return out
}

// fileImports returns the import paths of one Go file.
func fileImports(t *testing.T, path string) []string {
	af, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
	require.NoError(t, err)
	var out []string
	for _, imp := range af.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		out = append(out, p)
	}
	return out
}
