//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/audit"
)

// TestAuditLogHasEveryClientsCalls: two clients (two serve processes) on one sandbox;
// every call of each is in the sandbox's audit log with its client, its id (the one the
// client gave in _meta, else the request's), its outcome and its arguments' short form,
// never a written file's content; `log` prints it.
func TestAuditLogHasEveryClientsCalls(t *testing.T) {
	w := newWorld(t)
	state := t.TempDir()
	name := "pi-sbx-audit-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))[:20]
	env := []string{"DOCKER_SANDBOX=" + name, "XDG_STATE_HOME=" + state}

	first, _, _ := w.serve(nil, nil, env...)
	call(t, first, "write", `{"path":"notes.txt","content":"the secret content\n"}`)
	res := call(t, first, "bash", `{"command":"exit 3"}`)
	require.True(t, res.IsError)
	// Strings of 1 KiB and more reach the route as stand-ins (the relay's): the log
	// has what they stand for.
	big, err := json.Marshal(map[string]string{"path": "big.txt", "content": strings.Repeat("é\n", 1500)})
	require.NoError(t, err)
	call(t, first, "write", string(big))
	longCommand := "echo " + strings.Repeat("a", 1500) + " >/dev/null"
	long, err := json.Marshal(map[string]string{"command": longCommand})
	require.NoError(t, err)
	call(t, first, "bash", string(long))

	cmd := exec.Command(backendBin, "serve")
	cmd.Dir, cmd.Env = w.ws, w.env(env...)
	editor, err := mcp.NewClient(&mcp.Implementation{Name: "editor"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { editor.Close() })
	_, err = editor.CallTool(context.Background(), &mcp.CallToolParams{
		Name: "read", Arguments: json.RawMessage(`{"path":"notes.txt"}`),
		Meta: mcp.Meta{"pi-sbx/callId": "toolu_01"},
	})
	require.NoError(t, err)

	logCmd := func(args ...string) string {
		c := exec.Command(backendBin, append([]string{"log"}, args...)...)
		c.Env = append(os.Environ(), "XDG_STATE_HOME="+state)
		out, err := c.CombinedOutput()
		require.NoError(t, err, "log %v: %s", args, out)
		return string(out)
	}
	var entries []audit.Entry
	for _, line := range strings.Split(strings.TrimSpace(logCmd("--sandbox", name, "--json")), "\n") {
		var e audit.Entry
		require.NoError(t, json.Unmarshal([]byte(line), &e), line)
		if e.Tool != "pi_sbx_status" {
			entries = append(entries, e)
		}
	}
	require.Len(t, entries, 5, "%+v", entries)
	write, bash, bigWrite, longBash, read := entries[0], entries[1], entries[2], entries[3], entries[4]
	assert.Equal(t, map[string]string{"path": "big.txt", "content": "4500 bytes"}, bigWrite.Args)
	assert.Equal(t, []string{"big.txt"}, bigWrite.Files)
	assert.Equal(t, longCommand[:200]+"…", longBash.Args["command"])
	assert.Equal(t, "e2e", write.Client)
	assert.Equal(t, "write", write.Tool)
	assert.Equal(t, map[string]string{"path": "notes.txt", "content": "19 bytes"}, write.Args)
	assert.Equal(t, []string{"notes.txt"}, write.Files)
	assert.Equal(t, "ok", write.Outcome)
	assert.NotEmpty(t, write.CallID, "the request's id when the client gives none")
	assert.Equal(t, "error", bash.Outcome)
	assert.Equal(t, "exit 3", bash.Args["command"])
	assert.Equal(t, "editor", read.Client)
	assert.Equal(t, "toolu_01", read.CallID)
	assert.Equal(t, "ok", read.Outcome)

	raw, err := os.ReadFile(filepath.Join(state, "pi-sbx-backend", "audit", name+".jsonl"))
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "the secret content", "a written file's content is never logged")
	_, err = os.Stat(filepath.Join(w.ws, ".pi-sbx"))
	assert.True(t, os.IsNotExist(err), "nothing of the log in the workspace")

	text := logCmd("--sandbox", name)
	assert.Contains(t, text, `read             path="notes.txt"  ok`)
	assert.Contains(t, logCmd("--list"), name)
}
