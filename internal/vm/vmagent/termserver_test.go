package vmagent

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	term "github.com/pi-sbx/pi-sbx-backend/internal/vm/terminal"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// TestTerminalServerRoundTrip: the per-call client reaches a server it starts (here in
// this process), sessions outlive each call, a second server yields to the first, a stale
// socket file is replaced, and the server stops with its context.
func TestTerminalServerRoundTrip(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "server.sock")
	require.NoError(t, os.WriteFile(sock, nil, 0o600)) // left by a server that died
	m, err := term.NewManager(dir, term.Limits{})
	require.NoError(t, err)
	defer m.Close()
	reg, err := New(Terminal(func() (*term.Manager, error) { return m, nil })...)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	starts := 0
	served := make(chan error, 1)
	d := &TerminalDialer{Socket: sock, Start: func() error {
		starts++
		ln, release, err := ListenTerminals(sock)
		if err != nil {
			return err
		}
		go func() {
			defer release()
			served <- ServeTerminals(ctx, ln, reg, time.Hour, func() bool { return true })
		}()
		return nil
	}}
	client, err := New(TerminalClient(d)...)
	require.NoError(t, err)
	call := func(name string, args any) map[string]any {
		raw, _ := json.Marshal(args)
		res, err := client.Call(context.Background(), dir, name, raw, tools.Env{})
		require.NoError(t, err)
		require.False(t, res.IsError, "%+v", res)
		var d map[string]any
		b, _ := json.Marshal(res.Details)
		require.NoError(t, json.Unmarshal(b, &d))
		return d
	}
	d1 := call(tools.ExecCommandName, map[string]any{"cmd": "read x; echo got-$x", "tty": true, "yield_time_ms": 250})
	assert.Equal(t, true, d1["running"])
	d2 := call(tools.WriteStdinName, map[string]any{"session_id": d1["session_id"], "chars": "y\n", "yield_time_ms": 10000})
	assert.Equal(t, false, d2["running"])
	assert.Equal(t, 1, starts, "one server, started by the first call")

	ln, _, err := ListenTerminals(sock)
	require.NoError(t, err)
	assert.Nil(t, ln, "a second server yields to the one holding the lock")

	cancel()
	select {
	case err := <-served:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop")
	}
}

// TestTerminalServerClientGoneEndsItsWait: a client that closes its connection ends its
// call's wait in the server (seen as the server, idle otherwise, exiting only then).
func TestTerminalServerClientGoneEndsItsWait(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "server.sock")
	m, err := term.NewManager(dir, term.Limits{})
	require.NoError(t, err)
	defer m.Close()
	reg, err := New(Terminal(func() (*term.Manager, error) { return m, nil })...)
	require.NoError(t, err)
	s, err := m.Start(term.Spec{Cmd: "sleep 600", Argv: []string{"sleep", "600"}})
	require.NoError(t, err)
	ln, release, err := ListenTerminals(sock)
	require.NoError(t, err)
	defer release()
	served := make(chan error, 1)
	go func() {
		served <- ServeTerminals(context.Background(), ln, reg, 50*time.Millisecond, func() bool { return false })
	}()

	c, err := net.Dial("unix", sock)
	require.NoError(t, err)
	req, _ := json.Marshal(termRequest{Name: tools.ReadOutputName, Cwd: dir,
		Args: json.RawMessage(fmt.Sprintf(`{"session_id":%d,"wait_ms":300000}`, s.ID))})
	_, err = c.Write(append(req, '\n'))
	require.NoError(t, err)
	select {
	case <-served:
		t.Fatal("the server stopped while a call waited")
	case <-time.After(500 * time.Millisecond):
	}
	c.Close()
	select {
	case err := <-served:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the wait went on after its client left")
	}
}
