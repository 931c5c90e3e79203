//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/lifecycle"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// These tests run the backend against the parts of sbxsim that imitate real sbx's
// harder edges (the contract table, internal/host/sbx/contract.go): commands as the agent user, the
// auto-stop ~30 s after the last session, the daemon's start-up banner on stdout, the
// signed-out state, and versions.

// simEnv lets sbxsim's own settings through to it (the backend scrubs sbx's environment).
func simEnv(extra ...string) []string {
	return append([]string{"DOCKER_SANDBOX_ENV_ALLOWLIST=SBXSIM_STATE,SBXSIM_DOCKER,SBXSIM_AUTOSTOP,SBXSIM_VERSION"}, extra...)
}

// simState reads sbxsim's record of a sandbox (what create was asked for).
func (w *world) simState(name string) map[string]any {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.state, "sandboxes", name, "state.json"))
	require.NoError(w.t, err)
	var st map[string]any
	require.NoError(w.t, json.Unmarshal(b, &st))
	return st
}

func (w *world) status(name string) string {
	w.t.Helper()
	out, code := w.sim("ls", "--json")
	require.Zero(w.t, code, out)
	var ls struct {
		Sandboxes []struct{ Name, Status string } `json:"sandboxes"`
	}
	require.NoError(w.t, json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &ls), out)
	for _, s := range ls.Sandboxes {
		if s.Name == name {
			return s.Status
		}
	}
	return "missing"
}

// TestAgentRunsAsTheAgentUser: as in real sbx, the tools run as agent (UID 1000,
// HOME=/home/agent, passwordless sudo); the agent binary is installed where agent can
// run it; what agent writes in the workspace is the workspace owner's on the host.
func TestAgentRunsAsTheAgentUser(t *testing.T) {
	w := newWorld(t)
	cs, _, _ := w.serve(nil, nil, simEnv()...)
	res := call(t, cs, "bash", `{"command":"id -un; id -u; echo $HOME; sudo -n id -u; ls -l /tmp/pi-sbx-agent-* | cut -c1-10,11-30 | head -1; touch made-by-agent"}`)
	require.False(t, res.IsError, text(res))
	lines := strings.Split(strings.TrimSpace(text(res)), "\n")
	require.GreaterOrEqual(t, len(lines), 5, text(res))
	assert.Equal(t, []string{"agent", "1000", "/home/agent", "0"}, lines[:4])
	assert.Contains(t, lines[4], "-rwxr-xr-x", "the agent binary: %s", lines[4])
	assert.Contains(t, lines[4], "agent", "installed by agent: %s", lines[4])
	var ws, made syscall.Stat_t
	require.NoError(t, syscall.Stat(w.ws, &ws))
	require.NoError(t, syscall.Stat(filepath.Join(w.ws, "made-by-agent"), &made))
	assert.Equal(t, ws.Uid, made.Uid, "a file agent made is the workspace owner's on the host")
	// write and edit, which the agent does itself, keep working in a workspace owned by
	// someone else on the host.
	res = call(t, cs, "write", `{"path":"w.txt","content":"x\n"}`)
	require.False(t, res.IsError, text(res))
}

// TestStoppedSandboxIsStartedAgain: a sandbox stopped under a session (sbx stop, a daemon
// restart, a reboot) is started again by the next call and the channel re-opened, and
// an agent binary the VM lost is installed again by hash — nobody notices. Both
// transports.
func TestStoppedSandboxIsStartedAgain(t *testing.T) {
	for _, transport := range []string{"persistent", "per-call"} {
		t.Run(transport, func(t *testing.T) {
			w := newWorld(t)
			box := "e2e-restart-" + strconv.Itoa(os.Getpid())
			if transport == "per-call" {
				box += "-pc"
			}
			cs, _, _ := w.serve(nil, []string{"--transport", transport}, simEnv("DOCKER_SANDBOX="+box)...)
			res := call(t, cs, "read", `{"path":"README.md"}`)
			require.False(t, res.IsError, text(res))

			out, code := w.sim("stop", box)
			require.Zero(t, code, out)
			res = call(t, cs, "read", `{"path":"README.md"}`)
			require.False(t, res.IsError, "after a stop: %s", text(res))
			assert.Contains(t, text(res), "hello world")

			// The VM loses the agent (here: removed by root), then stops.
			out, code = w.sim("exec", "-u", "root", box, "sh", "-c", "rm -f /tmp/pi-sbx-agent-*")
			require.Zero(t, code, out)
			out, code = w.sim("stop", box)
			require.Zero(t, code, out)
			res = call(t, cs, "bash", `{"command":"echo back"}`)
			require.False(t, res.IsError, "after the agent was lost: %s", text(res))
			assert.Equal(t, "back\n", text(res))
		})
	}
}

// TestWhatMustNotStopIsKeptAlive: with sbx's auto-stop shortened to 2 s, a serve session
// keeps its sandbox running between calls — per-call transport (no channel between
// calls), a pinned DOCKER_SANDBOX and what was started in it (a background process, as
// a detached container would be) survive a pause longer than the auto-stop; once serve
// is gone, sbx's auto-stop applies again.
func TestWhatMustNotStopIsKeptAlive(t *testing.T) {
	w := newWorld(t)
	box := "e2e-keep-" + strconv.Itoa(os.Getpid())
	cs, cmd, _ := w.serve(nil, []string{"--transport", "per-call"}, simEnv("DOCKER_SANDBOX="+box, "SBXSIM_AUTOSTOP=2s")...)
	res := call(t, cs, "bash", `{"command":"setsid nohup sleep 600 >/dev/null 2>&1 & echo $!"}`)
	require.False(t, res.IsError, text(res))
	pid := strings.TrimSpace(text(res))
	assert.Equal(t, float64(2e9), w.simState(box)["autoStop"], "the sandbox was made with a 2 s auto-stop")
	time.Sleep(4 * time.Second)
	assert.Equal(t, "running", w.status(box))
	res = call(t, cs, "bash", `{"command":"kill -0 `+pid+` && echo alive"}`)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "alive\n", text(res), "what ran in the sandbox survived the pause")

	// serve goes (killed: no orderly shutdown); its keep-alive session ends with it.
	require.NoError(t, cmd.Process.Kill())
	_, _ = cmd.Process.Wait()
	assert.Eventually(t, func() bool { return w.status(box) == "stopped" }, 20*time.Second, 200*time.Millisecond,
		"without serve, sbx's auto-stop stops the pinned sandbox")
}

// TestDaemonBannerIsNotOutput: after the sbx daemon stopped (a reboot), the first sbx
// command prints its start-up banner on stdout; serve's parses (ls --json, the agent's
// install probe) and the agent channel skip it, before the first call and mid-session.
func TestDaemonBannerIsNotOutput(t *testing.T) {
	w := newWorld(t)
	out, code := w.sim("daemon", "stop")
	require.Zero(t, code, out)
	cs, _, _ := w.serve(nil, nil, simEnv()...)
	res := call(t, cs, "bash", `{"command":"echo first"}`)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "first\n", text(res))

	// The daemon stops again under the session: it takes the sandbox with it.
	out, code = w.sim("daemon", "stop")
	require.Zero(t, code, out)
	res = call(t, cs, "bash", `{"command":"echo second"}`)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "second\n", text(res))
	out, _ = w.sim("daemon", "status")
	assert.Contains(t, out, "Daemon is running")
}

// TestSignedOutIsOneClearError: signed out of Docker, every call fails with one error
// that names `sbx login` — not a command's exit 1 — and nothing runs on the host; after
// `sbx login` the same session works.
func TestSignedOutIsOneClearError(t *testing.T) {
	w := newWorld(t)
	out, code := w.sim("logout")
	require.Zero(t, code, out)
	cs, _, _ := w.serve(nil, nil, simEnv()...)
	for _, c := range []struct{ name, args string }{{"bash", `{"command":"touch on-host"}`}, {tools.StatusName, `{}`}} {
		res := call(t, cs, c.name, c.args)
		require.True(t, res.IsError, "%s: %s", c.name, text(res))
		assert.Contains(t, text(res), "signed out")
		assert.Contains(t, text(res), "sbx login")
	}
	assert.NoFileExists(t, filepath.Join(w.ws, "on-host"))
	// pi's status line gets serve's preflight verdict, as one line.
	res := call(t, cs, tools.StatusName, `{}`)
	assert.Contains(t, text(res), "sandbox: sbx is signed out — run sbx login")
	out, code = w.sim("login")
	require.Zero(t, code, out)
	res = call(t, cs, "bash", `{"command":"echo in"}`)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "in\n", text(res))
}

// TestCreatePullsOnlyWhatIsMissing: create passes --pull missing where the installed
// sbx has it (sbx re-pulls the template on every create otherwise), and leaves it out
// where it does not.
func TestCreatePullsOnlyWhatIsMissing(t *testing.T) {
	for _, tc := range []struct{ version, pull string }{{"0.53.0", "missing"}, {"0.45.0", "always"}} {
		t.Run(tc.version, func(t *testing.T) {
			w := newWorld(t)
			box := fmt.Sprintf("e2e-pull-%d-%s", os.Getpid(), strings.ReplaceAll(tc.version, ".", ""))
			cs, _, _ := w.serve(nil, nil, simEnv("DOCKER_SANDBOX="+box, "SBXSIM_VERSION="+tc.version)...)
			res := call(t, cs, "ls", `{}`)
			require.False(t, res.IsError, text(res))
			assert.Equal(t, tc.pull, w.simState(box)["pull"])
		})
	}
}

// TestOldSbxIsRefused: an sbx older than the oldest whose flags the backend uses is
// refused with the version found and the one needed; nothing is created.
func TestOldSbxIsRefused(t *testing.T) {
	w := newWorld(t)
	cs, _, _ := w.serve(nil, nil, simEnv("SBXSIM_VERSION=0.40.2")...)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ls", Arguments: json.RawMessage(`{}`)})
	require.NoError(t, err)
	require.True(t, res.IsError)
	assert.Contains(t, text(res), "found sbx v0.40.2")
	assert.Contains(t, text(res), "needs v0.42.0")
	assert.Empty(t, w.sandboxes())
}

// TestWarmReuseAfterAutoStop: a warm re-use sandbox stops by itself after its session
// (sbx's auto-stop, here 1 s); the next session re-attaches the stopped sandbox, starts
// it with its first call, and finds its agent still installed (/tmp survives a stop).
func TestWarmReuseAfterAutoStop(t *testing.T) {
	w := newWorld(t)
	env := simEnv("DOCKER_SANDBOX_REUSE=1", "SBXSIM_AUTOSTOP=1s")
	box := lifecycle.ProjectName(w.ws)
	agent := `{"command":"stat -c '%n %Y' /tmp/pi-sbx-agent-*"}`
	cs, cmd, _ := w.serve(nil, nil, env...)
	first := call(t, cs, "bash", agent)
	require.False(t, first.IsError, text(first))
	require.NoError(t, cs.Close())
	_ = cmd.Wait()
	require.Eventually(t, func() bool { return w.status(box) == "stopped" }, 20*time.Second, 100*time.Millisecond,
		"the warm sandbox stops by itself after its session")

	cs, _, _ = w.serve(nil, nil, env...)
	second := call(t, cs, "bash", agent)
	require.False(t, second.IsError, text(second))
	assert.Equal(t, text(first), text(second), "the same agent, not installed again")
	assert.Equal(t, "running", w.status(box))
}
