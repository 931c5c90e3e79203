//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/agentlink"
)

// TestServeEndsWhenItsClientIsGoneMidCall: a client killed while a call runs (pi by
// kill -9 during `sleep 100000`) closes both ends of serve's stdio. serve must not wait
// for that call's answer, which no one can read: it cancels the call, tears its
// sandbox down and exits. A client that only closes stdin and still reads gets every
// answer (TestServeScriptWithOddIDsEnds and the like).
func TestServeEndsWhenItsClientIsGoneMidCall(t *testing.T) {
	w := newWorld(t)
	p := w.startServe(t, w.ws, nil)
	stdin, stdout, stderr := p.stdin, p.stdout, p.stderr
	c, err := agentlink.Dial(context.Background(), stdout, stdin, stdin, agentlink.ClientOptions{Name: "e2e"})
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
	exited := p.exited
	select {
	case <-exited:
		t.Logf("serve ended %.2f s after its client, sandbox removed", time.Since(start).Seconds())
	case <-time.After(20 * time.Second):
		t.Fatalf("serve still runs 20 s after its client went away during a call\n%s", stderr.String())
	}
	assert.Empty(t, w.sandboxes(), "the session's sandbox is removed")
}

// TestServeSurvivesAClosedStdoutToTearDown: a client that closes serve's stdout and
// keeps writing makes serve's next answer fail; serve must end its session with the
// teardown (its sandbox removed) instead of dying by SIGPIPE and leaving that to the
// watchdog.
func TestServeSurvivesAClosedStdoutToTearDown(t *testing.T) {
	w := newWorld(t)
	p := w.startServe(t, w.ws, nil, "DOCKER_SANDBOX_GC_HOURS=0")
	stdin, stdout, stderr := p.stdin, p.stdout, p.stderr
	c, err := agentlink.Dial(context.Background(), stdout, stdin, nil, agentlink.ClientOptions{Name: "e2e"})
	require.NoError(t, err)
	_, err = c.CallTool(context.Background(), "write", json.RawMessage(`{"path":"ready","content":"x"}`), nil, "")
	require.NoError(t, err)
	require.Len(t, w.sandboxes(), 1)

	require.NoError(t, stdout.Close())
	for i := range 3 { // answers that cannot be written
		_, err := io.WriteString(stdin, fmt.Sprintf(`{"jsonrpc":"2.0","id":"p%d","method":"ping"}`+"\n", i))
		if err != nil {
			break // serve is gone already
		}
		time.Sleep(100 * time.Millisecond)
	}
	exited := p.exited
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("serve still runs 20 s after its stdout closed\n%s", stderr.String())
	}
	status := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	assert.False(t, status.Signaled(), "serve was killed by %v\n%s", status.Signal(), stderr.String())
	assert.Empty(t, w.sandboxes(), "serve tore its sandbox down itself")
}
