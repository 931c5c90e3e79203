//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// readOnlyCalls are calls that leave the workspace as it is; each is compared with
// `tool --local` on the same workspace.
var readOnlyCalls = []struct{ name, args string }{
	{"read", `{"path":"README.md"}`},
	{"read", `{"path":"notes/todo.txt","offset":2,"limit":1}`},
	{"read", `{"path":"images/pixel.png"}`},
	{"read", `{"path":"no/such/file"}`},
	{"ls", `{}`},
	{"ls", `{"path":"src"}`},
	{"grep", `{"pattern":"hello"}`},
	{"grep", `{"pattern":"todo","ignoreCase":true,"path":"notes"}`},
	{"find", `{"pattern":"**/*.go"}`},
	{"find", `{"pattern":"*.md"}`},
	{"bash", `{"command":"echo out; echo err >&2; pwd; exit 3"}`},
	// Edge inputs that conformance/ holds to pi (coerced arguments, NUL bytes, file://
	// URLs, odd numbers, names of every collation class), through the sandbox too.
	{"read", `{"path":"notes/todo.txt","offset":"2","limit":"1"}`},
	{"read", `{"path":"READ\u0000ME.md"}`},
	{"grep", `{"pattern":"he\u0000llo"}`},
	{"bash", `{"command":"echo \u0000"}`},
	{"read", `{"path":"file://host/README.md"}`},
	{"read", `{"path":"file:///x%2fy"}`},
	{"find", `{"pattern":"*.md","limit":1e21}`},
	{"grep", `{"pattern":"hello","ignoreCase":"true","literal":null,"context":" 1 ","limit":"1e1"}`},
	{"ls", `{"limit":"2.5"}`},
	{"ls", `{"path":"src\u0000"}`},
	{"find", `{"pattern":"*\u0000"}`},
	{"ls", `{"path":"file://localhost/no/such/dir"}`},
	{"ls", `{"path":"names"}`}, // writeEdgeFixture's
	{"find", `{"pattern":"*name*","path":"names"}`},
	{"find", `{"pattern":"ß*","path":"names"}`},
	{"read", `{"path":"images/thin-tall.png"}`},
	{"read", `{"path":"images/thin-wide.png"}`},
}

func TestServeRunsTheSevenToolsInTheSandbox(t *testing.T) {
	w := newWorld(t)
	cs, cmd, stderr := w.serve(nil, withDetails)
	ctx := context.Background()

	list, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		want, err := tools.Lookup(append(tools.Pi(), tools.Docker()...), tl.Name)
		require.NoError(t, err, tl.Name)
		assert.Equal(t, want.Description, tl.Description)
		wantSchema, _ := json.Marshal(want.Schema)
		gotSchema, _ := json.Marshal(tl.InputSchema)
		assert.JSONEq(t, string(wantSchema), string(gotSchema), tl.Name)
	}
	assert.ElementsMatch(t, tools.Names(append(tools.Pi(), tools.Docker()...)), names, "pi's seven and the docker_* tools")
	assert.Empty(t, w.sandboxes(), "listing tools creates no sandbox")

	writeEdgeFixture(t, w.ws)
	for _, c := range readOnlyCalls {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, w.local(c.name, c.args), viaMCP(t, call(t, cs, c.name, c.args)), "%s %s", c.name, c.args)
		})
	}
	boxes := w.sandboxes()
	require.Len(t, boxes, 1, "the session created its sandbox on first need")
	box := boxes[0]
	assert.Regexp(t, `^pi-sbx-\d+-[a-z0-9]+$`, box)
	assert.Contains(t, stderr.String(), "creating sandbox "+box, "progress goes to stderr")

	// The calls really ran in the VM: its hostname is the sandbox's, not ours.
	host, _ := os.Hostname()
	inside := text(call(t, cs, "bash", `{"command":"hostname"}`))
	assert.NotEqual(t, host+"\n", inside)

	// Mutating tools: the same call through the sandbox and locally, from the same
	// starting state, gives the same result and the same file on the host.
	mutating := []struct {
		name, args, file, start string
	}{
		{"write", `{"path":"out/new.txt","content":"written in the VM\n"}`, "out/new.txt", ""},
		{"edit", `{"path":"edit-me.txt","edits":[{"oldText":"beta","newText":"BETA"}]}`, "edit-me.txt", "alpha\nbeta\ngamma\n"},
		{"edit", `{"path":"edit-me.txt","edits":[{"oldText":"absent","newText":"x"}]}`, "edit-me.txt", "alpha\nbeta\ngamma\n"},
	}
	for _, m := range mutating {
		t.Run(m.name, func(t *testing.T) {
			p := filepath.Join(w.ws, m.file)
			reset := func() { w.resetWS(p, m.start) }
			reset()
			got := viaMCP(t, call(t, cs, m.name, m.args))
			inVM, err := w.readWS(p)
			if m.start == "" {
				require.NoError(t, err, "a file written in the sandbox is on the host")
			}
			reset()
			assert.Equal(t, w.local(m.name, m.args), got)
			local, _ := os.ReadFile(p)
			assert.Equal(t, string(local), string(inVM))
		})
	}

	// Only PI_* (and allowlisted) variables cross into the VM; nothing docker-related.
	env := text(call(t, cs, "bash", `{"command":"env | sort"}`))
	assert.Contains(t, env, "PI_E2E_MARK=forwarded")
	assert.NotContains(t, env, "HOST_SECRET")
	assert.NotRegexp(t, regexp.MustCompile(`(?m)^(DOCKER_|COMPOSE_)`), env)

	// Orderly shutdown removes the session's sandbox.
	require.NoError(t, cs.Close())
	require.NoError(t, ignoreExit(cmd.Wait()))
	assert.NotContains(t, w.sandboxes(), box, "the session-created sandbox is torn down")
}

// ignoreExit tolerates the exit status CommandTransport's Close may leave.
func ignoreExit(err error) error {
	if err != nil && strings.Contains(err.Error(), "Wait was already called") {
		return nil
	}
	return err
}

func TestToolSandboxMatchesLocal(t *testing.T) {
	w := newWorld(t)
	const box = "e2e-tool-sandbox"
	w.create(box)
	for _, c := range readOnlyCalls {
		cmd := command(backendBin, w.env(), "tool", "--sandbox", box, "--cwd", w.ws, c.name, c.args)
		out, err := cmd.Output()
		require.NoError(t, err, "%s %s: %s", c.name, c.args, stderrOf(err))
		assert.Equal(t, w.local(c.name, c.args), normalise(t, out), "%s %s", c.name, c.args)
	}
	// A malformed call (path missing, which no coercion mends) is refused on the host,
	// exit 2, before reaching the sandbox.
	cmd := command(backendBin, w.env(), "tool", "--sandbox", box, "--cwd", w.ws, "read", `{"offset":1}`)
	_, err := cmd.Output()
	assert.Equal(t, 2, exitCode(err))
}

func TestServeStreamsBashProgress(t *testing.T) {
	w := newWorld(t)
	var mu sync.Mutex
	var pieces []string
	var totals []float64
	gate := filepath.Join(w.ws, "go-on")
	cs, _, _ := w.serve(&mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, "tok-1", r.Params.ProgressToken)
		pieces = append(pieces, r.Params.Message)
		totals = append(totals, r.Params.Progress)
		if len(pieces) == 1 {
			// The command goes on only once its first output has reached the client:
			// proof that it streams while running, not just at the end.
			w.resetWS(gate, "go") // where the command looks: in review mode, the sandbox
		}
	}}, nil)
	params := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
		"command": "echo step 1; while [ ! -f go-on ]; do sleep 0.05; done; echo step 2; sleep 0.2; echo step 3"}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(context.Background(), params)
	require.NoError(t, err)
	out := text(res)
	// Notifications are delivered concurrently with the result: the last one may land
	// just after CallTool returns.
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(totals) > 0 && totals[len(totals)-1] == float64(len(out))
	}, 5*time.Second, 10*time.Millisecond, "the last progress total is the output's length")
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, "step 1\nstep 2\nstep 3\n", out)
	require.GreaterOrEqual(t, len(pieces), 2)
	assert.Equal(t, "step 1\n", pieces[0])
	assert.Equal(t, out, strings.Join(pieces, ""), "the progress messages are the output, in order")
	for i := 1; i < len(totals); i++ {
		assert.Greater(t, totals[i], totals[i-1], "progress increases")
	}
	assert.Equal(t, float64(len(out)), totals[len(totals)-1])
}

func TestServeCancelStopsTheCommandInTheVM(t *testing.T) {
	w := newWorld(t)
	cs, _, _ := w.serve(nil, nil)
	call(t, cs, "ls", `{}`) // the sandbox and agent are up
	box := w.sandboxes()[0]

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
			"command": "echo $$ > shell.pid; sleep 3000 & echo $! > sleep.pid; wait"}})
		done <- err
	}()
	proc := w.sandboxProc(t, box, w.waitPid(t, box, filepath.Join(w.ws, "sleep.pid")))
	shell := w.sandboxProc(t, box, w.waitPid(t, box, filepath.Join(w.ws, "shell.pid")))
	require.True(t, proc.alive(t), "the command runs in the VM's pid namespace")
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	// Both of the command's processes: the kill reaches them at once, but each ends in
	// its own time (on a loaded machine, the shell after its child).
	proc.waitExit(t, "notifications/cancelled killed the command inside the VM")
	shell.waitExit(t, "notifications/cancelled killed the command's shell inside the VM")
	ps, _ := w.sim("exec", box, "ps", "-eo", "args")
	assert.NotContains(t, ps, "sleep 3000")
	// The channel is still good.
	assert.Contains(t, text(call(t, cs, "bash", `{"command":"echo still here"}`)), "still here")
}

// waitPid waits for a pid file the command in sandbox box writes, and reads it there:
// in review mode the host never sees what the sandbox writes.
func (w *world) waitPid(t *testing.T, box, file string) int {
	var pid int
	require.Eventually(t, func() bool {
		out, code := w.sim("exec", box, "cat", file)
		if code != 0 || !strings.HasSuffix(out, "\n") {
			return false
		}
		var err error
		pid, err = strconv.Atoi(strings.TrimSpace(out))
		return err == nil
	}, 30*time.Second, 20*time.Millisecond)
	return pid
}

func TestServeRecoversWhenTheAgentIsKilled(t *testing.T) {
	w := newWorld(t)
	cs, _, _ := w.serve(nil, withDetails)
	call(t, cs, "ls", `{}`)
	box := w.sandboxes()[0]

	done := make(chan *mcp.CallToolResult, 1)
	go func() { done <- call(t, cs, "bash", `{"command":"touch started; sleep 3000"}`) }()
	require.Eventually(t, func() bool { _, err := w.readWS(filepath.Join(w.ws, "started")); return err == nil },
		30*time.Second, 20*time.Millisecond)
	out, code := w.sim("exec", box, "pkill", "-9", "-f", "pi-sbx-agent-.* agent")
	require.Zero(t, code, out)

	res := <-done
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "the sandbox agent stopped during the call")
	assert.Contains(t, text(res), "the next call restarts it")

	assert.Equal(t, w.local("read", `{"path":"README.md"}`), viaMCP(t, call(t, cs, "read", `{"path":"README.md"}`)),
		"the next call restarts the agent and works")
}

func TestServeFailsClosedWhenTheSandboxIsGone(t *testing.T) {
	for _, transport := range []string{"persistent", "per-call"} {
		t.Run(transport, func(t *testing.T) {
			w := newWorld(t)
			box := "e2e-gone-" + strings.ReplaceAll(transport, "-", "")
			w.create(box)
			cs, _, _ := w.serve(nil, []string{"--transport", transport}, "DOCKER_SANDBOX="+box)
			call(t, cs, "ls", `{}`)
			out, code := w.sim("rm", "-f", box)
			require.Zero(t, code, out)

			marker := filepath.Join(t.TempDir(), "ran-on-the-host")
			for i := 0; i < 2; i++ { // the failed call, and the next one that would restart the agent
				res := call(t, cs, "bash", `{"command":"touch `+marker+`"}`)
				assert.True(t, res.IsError)
				assert.Contains(t, text(res), "sandbox")
				assert.Regexp(t, "no sandbox named|agent stopped", text(res))
				_, err := os.Stat(marker)
				assert.True(t, os.IsNotExist(err), "nothing ran on the host")
			}
			assert.Empty(t, w.sandboxes(), "no sandbox was silently re-created")
		})
	}
}

func TestServeKeepsAPinnedSandbox(t *testing.T) {
	w := newWorld(t)
	const box = "e2e-pinned"
	w.create(box)
	cs, cmd, _ := w.serve(nil, nil, "DOCKER_SANDBOX="+box, "DOCKER_SANDBOX_TEARDOWN=remove")
	call(t, cs, "ls", `{}`)
	require.NoError(t, cs.Close())
	require.NoError(t, ignoreExit(cmd.Wait()))
	assert.Equal(t, []string{box}, w.sandboxes(), "a pinned sandbox is never removed")
	// The agent was installed outside the workspace.
	out, code := w.sim("exec", box, "sh", "-c", "ls /tmp/pi-sbx-agent-*")
	require.Zero(t, code, out)
	entries, _ := os.ReadDir(w.ws)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), "pi-sbx-agent")
	}
}

func TestServeConcurrentCalls(t *testing.T) {
	w := newWorld(t)
	cs, _, _ := w.serve(nil, withDetails)
	want := w.local("read", `{"path":"README.md"}`)
	call(t, cs, "ls", `{}`)
	const n = 200
	var wg sync.WaitGroup
	results := make(chan string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"path": "README.md"}})
			if err != nil {
				results <- err.Error()
				return
			}
			results <- viaMCP(t, res)
		}()
	}
	wg.Wait()
	close(results)
	count := 0
	for r := range results {
		assert.Equal(t, want, r)
		count++
	}
	assert.Equal(t, n, count)
}

func TestWatchdogRemovesTheSandboxAfterKill9(t *testing.T) {
	w := newWorld(t)
	cs, cmd, _ := w.serve(nil, nil)
	call(t, cs, "ls", `{}`)
	boxes := w.sandboxes()
	require.Len(t, boxes, 1)
	require.NoError(t, cmd.Process.Kill()) // SIGKILL: no orderly shutdown
	require.Eventually(t, func() bool { return len(w.sandboxes()) == 0 }, 60*time.Second, 200*time.Millisecond,
		"the watchdog removed %s after its owner died", boxes[0])
}

func TestServeReadOnlyWorkspace(t *testing.T) {
	w := newWorld(t)
	cs, cmd, _ := w.serve(nil, withDetails, "DOCKER_SANDBOX_WORKSPACE_RO=1")
	assert.Equal(t, w.local("read", `{"path":"README.md"}`), viaMCP(t, call(t, cs, "read", `{"path":"README.md"}`)))
	res := call(t, cs, "write", `{"path":"README.md","content":"overwritten"}`)
	assert.True(t, res.IsError)
	assert.Contains(t, strings.ToLower(text(res)), "read-only file system")
	res = call(t, cs, "bash", `{"command":"echo x > new-file"}`)
	assert.True(t, res.IsError)
	b, err := os.ReadFile(filepath.Join(w.ws, "README.md"))
	require.NoError(t, err)
	assert.Equal(t, "# demo\nhello world\nsecond line\n", string(b), "the host workspace is untouched")
	assert.NoFileExists(t, filepath.Join(w.ws, "new-file"))
	require.NoError(t, cs.Close())
	require.NoError(t, ignoreExit(cmd.Wait()))
	assert.Empty(t, w.sandboxes())
}

func TestServeWithoutSbxFailsClosed(t *testing.T) {
	w := newWorld(t)
	missing := filepath.Join(t.TempDir(), "no-such-sbx")
	cs, _, _ := w.serve(nil, nil, "PI_SBX_BIN="+missing)
	list, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	assert.Len(t, list.Tools, len(tools.Pi())+len(tools.Docker()), "tools are listed without any sandbox")
	marker := filepath.Join(w.ws, "ran-on-the-host")
	res := call(t, cs, "bash", `{"command":"touch `+marker+`"}`)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "sandbox error: ")
	assert.Contains(t, text(res), missing)
	assert.NoFileExists(t, marker, "nothing ran on the host")
	res = call(t, cs, "docker_ps", `{}`)
	assert.True(t, res.IsError, "the docker tools fail closed too")
	assert.Contains(t, text(res), missing)
}

// TestPerCallCarriesLargeArguments writes a file far larger than one argv string may be
// (~128 KB): per-call passes the arguments on stdin.
func TestPerCallCarriesLargeArguments(t *testing.T) {
	w := newWorld(t)
	cs, _, _ := w.serve(nil, []string{"--transport", "per-call"})
	content := strings.Repeat("0123456789abcdef\n", 64<<10) // 1 MiB
	args, err := json.Marshal(map[string]string{"path": "big.txt", "content": content})
	require.NoError(t, err)
	res := call(t, cs, "write", string(args))
	require.False(t, res.IsError, text(res))
	got, err := w.readWS(filepath.Join(w.ws, "big.txt"))
	require.NoError(t, err)
	assert.Equal(t, content, string(got))
}

// TestServeDockerInsideTheSandbox: the bash tool, as agent, reaches the sandbox's own
// Docker daemon at /var/run/docker.sock — not the host's (DOCKER_HOST points at the decoy, which the
// world asserts is never connected to).
func TestServeDockerInsideTheSandbox(t *testing.T) {
	w := newWorld(t)
	cs, _, _ := w.serve(nil, nil, "SBXSIM_DOCKER=1")
	res := call(t, cs, "bash", `{"command":"docker -H unix:///var/run/docker.sock info --format '{{.ID}}' && docker -H unix:///var/run/docker.sock image ls --format '{{.Repository}}' && id -un"}`)
	require.False(t, res.IsError, text(res))
	lines := strings.Split(strings.TrimSpace(text(res)), "\n")
	require.Len(t, lines, 3, text(res))
	assert.NotEmpty(t, lines[0], "the daemon's ID")
	assert.Equal(t, "busybox", lines[1], "the sandbox's own image store")
	assert.Equal(t, "agent", lines[2], "docker works as agent, the user the tools run as (as in real sbx)")
}

// TestServeForwardsPiSessionVariables: pi's session variables (PI_SESSION_ID, PI_MODEL,
// …) in serve's environment reach commands in the VM through both transports — pi tells
// the model it can inspect them.
func TestServeForwardsPiSessionVariables(t *testing.T) {
	for _, transport := range []string{"persistent", "per-call"} {
		t.Run(transport, func(t *testing.T) {
			w := newWorld(t)
			cs, _, _ := w.serve(nil, []string{"--transport", transport}, "PI_SESSION_ID=sess-42", "PI_MODEL=model-x")
			res := call(t, cs, "bash", `{"command":"echo $PI_SESSION_ID $PI_MODEL"}`)
			require.False(t, res.IsError, text(res))
			assert.Equal(t, "sess-42 model-x\n", text(res))
		})
	}
}
