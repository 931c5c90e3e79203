package arch

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

// The folders say where code runs: internal/host on the user's machine, internal/vm in
// the sandbox (the agent), internal/wire on both (the protocol and pi's formats). The
// simulator is neither side: nothing of the product links it.
const (
	hostDir = "internal/host"
	vmDir   = "internal/vm"
	wireDir = "internal/wire"
	simDir  = "internal/sbxsim"
)

// sbxDoor is the one package that starts sbx.
const sbxDoor = hostDir + "/sbx"

// lifecycleDir is a sandbox session's lifecycle (the Session, leases, owner records,
// arming the watchdog, keep-alive, GC), built on the door: it runs sbx only through the
// door's Client, never a Runner or a process of its own.
const lifecycleDir = hostDir + "/lifecycle"

// gitDoor is the one package besides sbx/ that starts a process on the host: git, on the
// object store the sandbox's work was fetched into, with hooks, fsmonitor, drivers and
// the user's GIT_* variables kept out (security.md, section 13).
const gitDoor = hostDir + "/review/hostgit"

// checkpointDoor starts git in the VM, on the workspace, for review mode's journal.
const checkpointDoor = vmDir + "/checkpoint"

// under reports whether the module-relative package path rel is dir or inside it.
func under(rel, dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }

// testSupport reports whether a module package is the tests' own (building programs,
// setting up the simulator): only test files may link it.
func testSupport(rel string) bool { return rel == "internal/testbin" || rel == "internal/testsim" }

// vmOnly reports whether a module package may be linked only by the in-sandbox agent
// (and tool --local), or by tests: the tool implementations and the simulator.
func vmOnly(rel string) bool {
	return under(rel, vmDir) || under(rel, simDir) || rel == "cmd/sbxsim"
}

// TestSidesByFolder is the layout's one rule, by folder: nothing under internal/host
// imports anything under internal/vm (or the simulator), nothing under internal/vm
// imports internal/host, internal/wire imports neither side, and the product links
// neither the simulator nor the tests' support (testbin, testsim).
func TestSidesByFolder(t *testing.T) {
	banned := map[string]func(rel string) bool{
		hostDir: func(rel string) bool { return vmOnly(rel) || testSupport(rel) },
		vmDir:   func(rel string) bool { return under(rel, hostDir) || under(rel, simDir) || testSupport(rel) },
		wireDir: func(rel string) bool {
			return under(rel, hostDir) || under(rel, vmDir) || under(rel, simDir) || testSupport(rel)
		},
		"cmd/pi-sbx-backend": func(rel string) bool {
			return under(rel, simDir) || testSupport(rel)
		},
	}
	for dir, bad := range banned {
		pkgs := 0
		for pkg, d := range listDeps(t, "./"+dir+"/...") {
			rel, ours := strings.CutPrefix(pkg, module+"/")
			if !ours || !under(rel, dir) {
				continue
			}
			pkgs++
			for _, imp := range d.imports {
				irel, ours := strings.CutPrefix(imp, module+"/")
				assert.False(t, ours && bad(irel), "%s (under %s) imports %s", rel, dir, irel)
			}
		}
		require.Positive(t, pkgs, "no packages under %s", dir)
	}
	// Descriptions are plain data: no protocol, no wire format, no implementation.
	for pkg := range listDeps(t, "./"+wireDir+"/tools") {
		for _, bad := range []string{wireDir + "/mcpserver", wireDir + "/jsonwire"} {
			assert.NotEqual(t, module+"/"+bad, pkg, "tools links %s", pkg)
		}
	}
}

// TestHostPathLinksNoVMCode: everything the host subcommands link, transitively, is free
// of the tool implementations and of the simulator.
func TestHostPathLinksNoVMCode(t *testing.T) {
	deps := listDeps(t, hostRoots(t)...)
	for pkg := range deps {
		rel, ours := strings.CutPrefix(pkg, module+"/")
		assert.False(t, ours && vmOnly(rel), "the host path links %s (imported by %s)", rel, importers(deps, pkg))
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
			if rel != sbxDoor && rel != gitDoor {
				assert.NotContains(t, imports, "os/exec", "%s starts processes", path)
				for _, call := range []string{"StartProcess", "ForkExec", "syscall.Exec", "unix.Exec"} {
					assert.NotContains(t, string(src), call, "%s starts processes", path)
				}
			}
			netOK := rel == hostDir+"/deploy" && f == "curl.go"
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
	mod, err := os.ReadFile("../../go.mod")
	require.NoError(t, err)
	assert.NotContains(t, string(mod), "github.com/docker/", "no Docker client library in the module")
}

// TestLifecycleRunsSbxThroughTheDoor: the lifecycle package (and whatever it links but
// the door) neither starts processes (TestOnlySbxStartsProcessesOnTheHostPath) nor drives
// the door's Runner itself: every sbx it runs, the watchdog's too, goes through the
// door's Client, so "only sbx/ starts sbx" holds for it.
func TestLifecycleRunsSbxThroughTheDoor(t *testing.T) {
	deps := listDeps(t, "./"+lifecycleDir)
	d, ok := deps[module+"/"+lifecycleDir]
	require.True(t, ok, "go list found %s", lifecycleDir)
	require.NotEmpty(t, d.files)
	assert.Contains(t, d.imports, module+"/"+sbxDoor, "the lifecycle is built on the door")
	for _, f := range d.files {
		path := filepath.Join(d.dir, f)
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.NotContains(t, fileImports(t, path), "os/exec", "%s starts processes", path)
		for _, call := range []string{"Runner.Start", ".Runner", "ExecRunner", "StartProcess", "ForkExec", "syscall.Exec", "unix.Exec", ".Bin"} {
			assert.NotContains(t, string(src), call, "%s runs sbx (or a process) itself instead of through the door's Client", path)
		}
	}
}

// TestLayerRules: within a side, what each package must not link, transitively.
func TestLayerRules(t *testing.T) {
	const (
		session   = hostDir + "/session"
		agentlink = hostDir + "/agentlink"
		deploy    = hostDir + "/deploy"
		review    = hostDir + "/review"
		keep      = review + "/keep"
		mcpserver = wireDir + "/mcpserver"
		jsonwire  = wireDir + "/jsonwire"
		tools     = wireDir + "/tools"
		fsops     = vmDir + "/fsops"
		shell     = vmDir + "/shell"
		vmagent   = vmDir + "/vmagent"
	)
	rules := map[string][]string{
		keep:                   {session, mcpserver, agentlink, deploy},
		mcpserver:              {sbxDoor, agentlink, session},
		agentlink:              {session, deploy},
		deploy:                 {agentlink, session},
		tools:                  {mcpserver, jsonwire},
		fsops:                  {mcpserver, jsonwire, tools, vmagent, shell},
		shell:                  {mcpserver, jsonwire, tools, vmagent, fsops},
		vmDir + "/terminal":    {mcpserver, jsonwire, tools, vmagent, fsops},
		wireDir + "/pi/result": {tools, mcpserver},
		// review knows two commits in a host object store, not sandboxes or protocols.
		// The door is only the door: it knows sbx, not sessions, leases or protocols.
		sbxDoor: {lifecycleDir, session, agentlink, mcpserver, jsonwire, deploy, tools, review},
		// The lifecycle is sandboxes' lives, not what runs in them.
		lifecycleDir: {session, agentlink, mcpserver, jsonwire, deploy, tools, review},
		review:       {sbxDoor, lifecycleDir, session, agentlink, mcpserver, jsonwire, deploy, tools},
		gitDoor:      {sbxDoor, lifecycleDir, session, agentlink, mcpserver, jsonwire, deploy, tools, review},
	}
	for pkg, banned := range rules {
		deps := listDeps(t, "./"+pkg)
		for d := range deps {
			rel, ours := strings.CutPrefix(d, module+"/")
			if !ours {
				continue
			}
			for _, b := range banned {
				// A package may link what sits inside its own folder (review's hostgit).
				assert.False(t, rel == b || (under(rel, b) && !under(pkg, b)), "%s links %s (imported by %s)", pkg, rel, importers(deps, d))
			}
		}
	}
	for d := range listDeps(t, "./"+jsonwire) {
		assert.False(t, strings.HasPrefix(d, module+"/") && d != module+"/"+jsonwire, "jsonwire links %s", d)
	}
}

// TestOnlySbxAndShellStartProcesses: in the whole module outside the simulator (and the
// tests' support, internal/testbin and internal/testsim), only sbx/ (the sbx CLI, on the
// host), hostgit/ (git on the host, for review and land), shell/ (commands, in the VM)
// and checkpoint/ (git in the VM, for the journal) start processes.
func TestOnlySbxAndShellStartProcesses(t *testing.T) {
	deps := listDeps(t, "./...")
	checked := 0
	for pkg, d := range deps {
		rel, ours := strings.CutPrefix(pkg, module+"/")
		for _, support := range []string{"internal/testbin", "internal/testsim"} {
			if !testSupport(rel) {
				assert.NotContains(t, d.imports, module+"/"+support, "%s links the tests' support", pkg)
			}
		}
		// internal/testbin builds the programs for tests (go build) and internal/testsim
		// runs the simulator; nothing but tests links them.
		if !ours || rel == sbxDoor || rel == gitDoor || rel == vmDir+"/shell" || rel == checkpointDoor || under(rel, simDir) || rel == "cmd/sbxsim" || testSupport(rel) {
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
	roots := []string{"./" + hostDir + "/...", "./" + wireDir + "/..."}
	for _, f := range existingHostFiles(t) {
		for _, imp := range fileImports(t, f) {
			if rel, ours := strings.CutPrefix(imp, module+"/"); ours {
				assert.False(t, vmOnly(rel), "%s imports %s", f, rel)
				roots = append(roots, "./"+rel)
			}
		}
	}
	return roots
}

// existingHostFiles are the files of cmd/pi-sbx-backend that implement host subcommands:
// those built for macOS or Windows, where the binary is only the host's. (The command is
// one binary, also the agent: a file built for linux alone is the agent's side.)
func existingHostFiles(t *testing.T) []string {
	seen := map[string]bool{}
	var out []string
	for _, goos := range []string{"darwin", "windows"} {
		cmd := exec.Command("go", "list", "-f", "{{.Dir}}\t{{join .GoFiles \" \"}}", "./cmd/pi-sbx-backend")
		cmd.Dir = "../.."
		cmd.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
		b, err := cmd.Output()
		require.NoError(t, err, "go list for %s", goos)
		dir, files, _ := strings.Cut(strings.TrimSpace(string(b)), "\t")
		for _, f := range strings.Fields(files) {
			if p := filepath.Join(dir, f); !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	require.GreaterOrEqual(t, len(out), 10, "the host's files of cmd/pi-sbx-backend were listed")
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
	cmd.Dir = "../.."
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
