package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
	"github.com/pi-sbx/pi-sbx-backend/mcpserver"
)

// TestServeEndsWhenItsClientIsGoneMidCall: a client killed while a call runs (pi by
// kill -9 during `sleep 100000`) closes both ends of serve's stdio. serve must not wait
// for that call's answer, which no one can read: it cancels the call, tears its
// sandbox down and exits. A client that only closes stdin and still reads gets every
// answer (TestServeScriptAnswersEveryRequest and the like).
func TestServeEndsWhenItsClientIsGoneMidCall(t *testing.T) {
	w := newWorld(t)
	cmd := exec.Command(backendBin, "serve", "--workspace", w.ws)
	cmd.Dir, cmd.Env = w.ws, w.env()
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := &testbin.SyncBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	c, err := mcpserver.Dial(context.Background(), stdout, stdin, stdin, mcpserver.ClientOptions{Name: "e2e"})
	require.NoError(t, err)
	_, err = c.CallTool(context.Background(), "write", json.RawMessage(`{"path":"ready","content":"x"}`), nil, "")
	require.NoError(t, err)
	require.Len(t, w.sandboxes(), 1, "the session's sandbox")

	go func() {
		_, _ = c.CallTool(context.Background(), "bash", json.RawMessage(`{"command":"sleep 100000"}`), nil, "")
	}()
	time.Sleep(time.Second) // the command runs in the VM

	// The client dies: both of its ends close.
	start := time.Now()
	require.NoError(t, stdin.Close())
	require.NoError(t, stdout.Close())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-exited:
		t.Logf("serve ended %.2f s after its client, sandbox removed", time.Since(start).Seconds())
	case <-time.After(20 * time.Second):
		t.Fatalf("serve still runs 20 s after its client went away during a call\n%s", stderr.String())
	}
	assert.Empty(t, w.sandboxes(), "the session's sandbox is removed")
}
