//go:build e2e

// Package e2e runs the real pi-sbx-backend against sbxsim, the project's simulator of the
// sbx CLI, through the same code path as with a real microVM: serve, the agent inside the
// "VM", tool --sandbox, and MCP clients (the Go SDK's, and the official TypeScript SDK's).
// The tests need root (sbxsim makes namespaces); CI runs as root, so not being root is a
// failure, never a skip.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
	"github.com/pi-sbx/pi-sbx-backend/internal/testsim"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
)

// Binaries built once for the package.
var simBin, backendBin string

func TestMain(m *testing.M) {
	// PI_SBX_E2E_BIN names a directory to build into and keep, so that a profiler can
	// find the binaries' symbols after the run (perf record -g go test ./e2e ...).
	testbin.Main(m, "PI_SBX_E2E_BIN", map[*string]string{&simBin: "./cmd/sbxsim", &backendBin: "./cmd/pi-sbx-backend"})
}

// world is one test's sbxsim state, workspace and a decoy Docker socket that nothing
// may ever connect to.
type world struct {
	t         testing.TB
	sims      *testsim.Sim
	state     string // sims.State
	ws        string
	decoy     string
	decoyHits atomic.Int64
}

func newWorld(t testing.TB) *world {
	t.Helper()
	return newWorldOn(t, testsim.New(t, simBin, false))
}

// newFreshWorld is newWorld on a fresh sbx install: no network preset chosen yet.
func newFreshWorld(t testing.TB) *world {
	t.Helper()
	return newWorldOn(t, testsim.NewFresh(t, simBin, false))
}

func newWorldOn(t testing.TB, sims *testsim.Sim) *world {
	t.Helper()
	w := &world{t: t, sims: sims, state: sims.State, ws: t.TempDir()}
	// A decoy Docker daemon: DOCKER_HOST points here in every environment the backend
	// gets. Any connection is a leak of the host's docker configuration.
	sockDir, err := os.MkdirTemp("", "decoy-")
	require.NoError(t, err)
	w.decoy = filepath.Join(sockDir, "docker.sock")
	ln, err := net.Listen("unix", w.decoy)
	require.NoError(t, err)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			w.decoyHits.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() {
		w.sim("rm", "-f", "--all") // before the decoy's count is read
		ln.Close()
		os.RemoveAll(sockDir)
		assert.Zero(t, w.decoyHits.Load(), "the host DOCKER_HOST decoy socket was connected to")
	})
	writeFixture(t, w.ws)
	if os.Getenv("PI_SBX_E2E_GIT") == "1" {
		gitFixture(t, w.ws)
	}
	return w
}

// gitFixture makes the workspace a git repository with the fixture committed
// (PI_SBX_E2E_GIT=1: with DOCKER_SANDBOX_WORKSPACE_MODE=review the suite then runs on sbx
// --clone sandboxes).
func gitFixture(t testing.TB, dir string) {
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "fixture"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@e", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1"}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
}

// writeFixture lays out a small project: text, nested code, an ignored file, an image.
func writeFixture(t testing.TB, dir string) {
	files := map[string]string{
		"README.md":          "# demo\nhello world\nsecond line\n",
		"src/main.go":        "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n",
		"src/util/util.go":   "package util\n\n// Hello says hello.\nfunc Hello() string { return \"hello\" }\n",
		"notes/todo.txt":     "TODO: one\nTODO: two\ndone: three\n",
		".gitignore":         "build/\n",
		"build/out.txt":      "hello from build\n",
		"edit-me.txt":        "alpha\nbeta\ngamma\n",
		"images/pixel.png":   string(pngPixel),
		"deep/a/b/c/file.md": "deep hello\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// pngPixel is a 1x1 PNG.
var pngPixel = []byte{0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00,
	0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0, 0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99,
	0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82}

// env is the environment the backend runs with: what a user's shell might have,
// including docker variables that must not leak, plus sbxsim's settings (allowlisted,
// since the backend passes nothing else to sbx).
func (w *world) env(extra ...string) []string {
	keys, passed := suiteSim()
	return append(append(append(suiteMode(extra), []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"PI_SBX_BIN=" + simBin,
		"SBXSIM_STATE=" + w.state, "SBXSIM_DOCKER=0",
		"DOCKER_SANDBOX_ENV_ALLOWLIST=" + strings.Join(keys, ","),
		"DOCKER_HOST=unix://" + w.decoy, "DOCKER_CONTEXT=decoy", "COMPOSE_PROJECT_NAME=decoy",
		"PI_E2E_MARK=forwarded", "HOST_SECRET=must-not-cross",
	}...), passed...), extra...)
}

// suiteSimVars are the simulator's settings a pass of the suite may set in the test
// process (scripts/test.sh): the workspace over the virtiofs-shaped share
// (SBXSIM_SHARE=fuse and its cache and latency), another sbx version (SBXSIM_VERSION).
var suiteSimVars = []string{"SBXSIM_SHARE", "SBXSIM_SHARE_CACHE", "SBXSIM_SHARE_LATENCY", "SBXSIM_VERSION"}

// suiteSim is the allowlist a serve passes to sbx (the backend passes nothing else) and
// the simulator settings of this pass, taken from the test process's environment.
// A test that sets an allowlist of its own leaves the pass's settings out.
func suiteSim() (allowlist, passed []string) {
	allowlist = []string{"SBXSIM_STATE", "SBXSIM_DOCKER"}
	for _, k := range suiteSimVars {
		if v, ok := os.LookupEnv(k); ok {
			allowlist = append(allowlist, k)
			passed = append(passed, k+"="+v)
		}
	}
	return allowlist, passed
}

// suiteMode runs the whole suite in another workspace mode when the test process has
// DOCKER_SANDBOX_WORKSPACE_MODE (scripts/test.sh runs a pass with review): every serve
// gets it, unless a test sets a workspace mode of its own. Review mode's teardown then
// removes sandboxes with unlanded work too (after fetching it), as the tests expect of
// a teardown.
func suiteMode(extra []string) []string {
	mode := os.Getenv("DOCKER_SANDBOX_WORKSPACE_MODE")
	if mode == "" {
		return nil
	}
	for _, kv := range extra {
		if strings.HasPrefix(kv, "DOCKER_SANDBOX_WORKSPACE_") {
			return nil
		}
	}
	return []string{"DOCKER_SANDBOX_WORKSPACE_MODE=" + mode, "DOCKER_SANDBOX_TEARDOWN_FORCE=1"}
}

// sim runs sbxsim directly (the test's own view of the sandboxes) and returns its
// output (stdout and stderr interleaved) and exit code.
func (w *world) sim(args ...string) (string, int) {
	w.t.Helper()
	r := w.sims.Run(args...)
	return r.Output, r.Code
}

// sandboxes lists the test's sandboxes.
func (w *world) sandboxes() []string { return w.sims.Sandboxes() }

// create makes a sandbox on the workspace, as a user pinning DOCKER_SANDBOX would.
func (w *world) create(name string) {
	out, code := w.sim("create", "--name", name, "shell", w.ws)
	require.Zero(w.t, code, out)
}

// serve starts `pi-sbx-backend serve` in the workspace and connects the Go SDK's client.
func (w *world) serve(opts *mcp.ClientOptions, args []string, extraEnv ...string) (*mcp.ClientSession, *exec.Cmd, *testbin.SyncBuffer) {
	w.t.Helper()
	return w.serveAs("e2e", opts, args, extraEnv...)
}

// serveAs is serve with a client that names itself client (what the journal and the
// audit log record of its calls).
func (w *world) serveAs(client string, opts *mcp.ClientOptions, args []string, extraEnv ...string) (*mcp.ClientSession, *exec.Cmd, *testbin.SyncBuffer) {
	w.t.Helper()
	cmd := exec.Command(backendBin, append([]string{"serve"}, args...)...)
	cmd.Dir = w.ws
	cmd.Env = w.env(extraEnv...)
	stderr := &testbin.SyncBuffer{}
	cmd.Stderr = stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: client}, opts).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(w.t, err)
	w.t.Cleanup(func() { cs.Close() })
	return cs, cmd, stderr
}

// local runs `tool --local` in the workspace and returns its JSON result, normalised.
func (w *world) local(name, args string) string {
	w.t.Helper()
	cmd := exec.Command(backendBin, "tool", "--local", "--cwd", w.ws, name, args)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	out, err := cmd.Output()
	require.NoError(w.t, err, "tool --local %s %s", name, args)
	return normalise(w.t, out)
}

// normalise re-encodes a JSON result so that key order does not matter.
func normalise(t testing.TB, data []byte) string {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(data, &v), "%s", data)
	out, err := json.Marshal(v)
	require.NoError(t, err)
	return string(out)
}

// viaMCP converts an MCP tool result to the `tool` JSON shape, normalised.
func viaMCP(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	r, err := mcpserver.FromMCP(res)
	require.NoError(t, err)
	b, err := json.Marshal(r)
	require.NoError(t, err)
	return normalise(t, b)
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func call(t *testing.T, cs *mcp.ClientSession, name, args string) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	require.NoError(t, err, "%s %s", name, args)
	return res
}

// servePipes is a serve process started on pipes the test holds, for tests that close
// or break them (or speak to serve without an SDK).
type servePipes struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *testbin.SyncBuffer
	exited chan struct{} // closed once serve has exited (cmd.ProcessState is then set)
}

// startServe starts `pi-sbx-backend serve --workspace w.ws` with args in dir, on pipes.
// When the test ends its stdin is closed, so that it ends as a client would end it
// (teardown included); one still running 30 s later is killed.
func (w *world) startServe(t testing.TB, dir string, args []string, extraEnv ...string) *servePipes {
	t.Helper()
	cmd := exec.Command(backendBin, append([]string{"serve", "--workspace", w.ws}, args...)...)
	cmd.Dir, cmd.Env = dir, w.env(extraEnv...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	p := &servePipes{cmd: cmd, stdin: stdin, stdout: stdout, stderr: &testbin.SyncBuffer{}}
	cmd.Stderr = p.stderr
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	p.exited = exited
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	return p
}

// modeName is the workspace mode the suite's sessions run in, as status lines show it.
func modeName() string {
	if m := os.Getenv("DOCKER_SANDBOX_WORKSPACE_MODE"); m != "" {
		return m
	}
	return "rw"
}

// reviewSuite reports whether the suite runs in review mode: the sandbox's writes then
// stay in the sandbox, and a test reads (and resets) them there.
func reviewSuite() bool { return os.Getenv("DOCKER_SANDBOX_WORKSPACE_MODE") == "review" }

// readWS reads a workspace file as the sandbox's tools left it: on the host, or in the
// (one) sandbox in review mode.
func (w *world) readWS(p string) ([]byte, error) {
	if !reviewSuite() {
		return os.ReadFile(p)
	}
	boxes := w.sandboxes()
	if len(boxes) != 1 {
		return nil, fmt.Errorf("reading %s in the sandbox: %d sandboxes", p, len(boxes))
	}
	out, code := w.sim("exec", boxes[0], "cat", p)
	if code != 0 {
		return nil, fmt.Errorf("reading %s in %s: %s: %w", p, boxes[0], out, os.ErrNotExist)
	}
	return []byte(out), nil
}

// resetWS puts a workspace file back to content ("" removes it) on the host and, in
// review mode, in the sandbox too: each side then starts a call from the same state.
func (w *world) resetWS(p, content string) {
	os.Remove(p)
	if content != "" {
		require.NoError(w.t, os.WriteFile(p, []byte(content), 0o644))
	}
	if reviewSuite() {
		for _, box := range w.sandboxes() {
			out, code := w.sim("exec", box, "sh", "-c", `rm -f "$1"; [ -z "$2" ] || printf %s "$2" > "$1"`, "reset", p, content)
			require.Zero(w.t, code, out)
		}
	}
}
