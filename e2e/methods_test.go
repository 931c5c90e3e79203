//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/lifecycle"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// TestServePtyExec: serve's unlisted pi_sbx_pty_exec runs a command on a terminal in the
// sandbox, streams its raw output as progress, reports its exit code, and is not in
// tools/list.
func TestServePtyExec(t *testing.T) {
	w := newWorld(t)
	var mu sync.Mutex
	var streamed strings.Builder
	cs, _, _ := w.serve(&mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		streamed.WriteString(req.Params.Message)
		mu.Unlock()
	}}, nil)
	list, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	for _, tl := range list.Tools {
		assert.NotContains(t, []string{tools.PtyExecName, tools.PtyResizeName, tools.StatusName, tools.ReviewName, tools.NetworkName, tools.CallsName, tools.UndoName}, tl.Name, "serve methods are not offered to models")
	}

	params := &mcp.CallToolParams{Name: tools.PtyExecName, Arguments: map[string]any{
		"command": `test -t 1 && echo "tty $(tput cols)x$(tput lines)"; hostname; printf '\033[31mred\033[0m\n'; exit 5`,
		"cols":    132, "rows": 40, "env": map[string]string{"TERM": "xterm"}}}
	params.SetProgressToken("pty")
	res, err := cs.CallTool(context.Background(), params)
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	box := w.sandboxes()[0]
	want := "tty 132x40\r\n" + box + "\r\n\x1b[31mred\x1b[0m\r\n"
	// The Go SDK hands notifications to the handler concurrently with the result.
	got := func() string { mu.Lock(); defer mu.Unlock(); return streamed.String() }
	assert.Eventually(t, func() bool { return got() == want }, 5*time.Second, 10*time.Millisecond, "the raw terminal output, streamed: %q", got())
	var details struct {
		ExitCode int `json:"exit_code"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	require.NoError(t, json.Unmarshal(b, &details))
	assert.Equal(t, 5, details.ExitCode)
}

// TestServePtyExecCancel: cancelling the request kills the command in the VM.
func TestServePtyExecCancel(t *testing.T) {
	w := newWorld(t)
	cs, _, _ := w.serve(nil, nil)
	call(t, cs, "ls", `{}`)
	box := w.sandboxes()[0]
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.PtyExecName, Arguments: map[string]any{
			"command": "sleep 3000 & echo $! > pty.pid; wait"}})
		done <- err
	}()
	proc := w.sandboxProc(t, box, w.waitPid(t, box, filepath.Join(w.ws, "pty.pid")))
	require.True(t, proc.alive(t))
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	proc.waitExit(t, "the command was killed in the VM")
}

// TestServeStatusPrewarms: pi_sbx_status creates the sandbox and starts the agent, and
// describes the session.
func TestServeStatusPrewarms(t *testing.T) {
	w := newWorld(t)
	cs, _, _ := w.serve(nil, nil, "DOCKER_SANDBOX_WORKSPACE_RO=1")
	assert.Empty(t, w.sandboxes())
	res := call(t, cs, tools.StatusName, `{}`)
	require.False(t, res.IsError, text(res))
	box := w.sandboxes()
	require.Len(t, box, 1)
	got, _ := json.Marshal(res.StructuredContent)
	assert.JSONEq(t, `{"sandbox":"`+box[0]+`","status":"running","workspace":"`+w.ws+`","workspace_mode":"ro",
		"env_mode":"allowlist (PI_* and `+envModeKeys()+`)","teardown":"remove","reuse":false,
		"shell":"DOCKER_SANDBOX=`+box[0]+` pi-sbx-backend shell"`+suiteNetwork()+`}`, string(got))
	ps, _ := w.sim("exec", box[0], "ps", "-eo", "args")
	assert.Contains(t, ps, " agent", "the agent already runs")
}

// TestServeReuseKeepsTheProjectSandbox: with DOCKER_SANDBOX_REUSE=1 the session uses the
// project's sandbox pi-sbx-<basename>-<hash>, keeps it at exit, and the next session
// re-attaches to it.
func TestServeReuseKeepsTheProjectSandbox(t *testing.T) {
	w := newWorld(t)
	name := lifecycle.ProjectName(w.ws)
	for i := 0; i < 2; i++ {
		cs, cmd, stderr := w.serve(nil, nil, "DOCKER_SANDBOX_REUSE=1")
		res := call(t, cs, tools.StatusName, `{}`)
		got, _ := json.Marshal(res.StructuredContent)
		assert.Contains(t, string(got), `"sandbox":"`+name+`"`)
		assert.Contains(t, string(got), `"reuse":true`)
		call(t, cs, "bash", `{"command":"echo `+strconv.Itoa(i)+` >> runs"}`)
		require.NoError(t, cs.Close())
		require.NoError(t, ignoreExit(cmd.Wait()))
		assert.Equal(t, []string{name}, w.sandboxes(), "kept after the session")
		if i == 1 {
			assert.NotContains(t, stderr.String(), "creating sandbox", "the second session re-attached")
		}
	}
	out, code := w.sim("exec", name, "cat", w.ws+"/runs")
	require.Zero(t, code, out)
	assert.Equal(t, "0\n1\n", out)
}

// suiteNetwork is the status's network member in this pass: the policy in a word
// ("open": testsim chooses allow-all) where sbx has one (inspect, from 0.55), else none.
func suiteNetwork() string {
	if v := os.Getenv("SBXSIM_VERSION"); v != "" && sbx.CompareVersions(v, sbx.V055) < 0 {
		return ""
	}
	return `,"network":"open"`
}

// envModeKeys is how the status names the suite's allowlist.
func envModeKeys() string {
	keys, _ := suiteSim()
	return strings.Join(keys, ", ")
}
