//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServeSurvivesMalformedInput writes raw lines to serve's stdin: each bad one gets a
// JSON-RPC error and the server goes on serving.
func TestServeSurvivesMalformedInput(t *testing.T) {
	w := newWorld(t)
	cmd := exec.Command(backendBin, "serve")
	cmd.Dir, cmd.Env = w.ws, w.env()
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	replies := bufio.NewScanner(stdout)
	replies.Buffer(nil, 8<<20)
	send := func(line string) {
		_, err := io.WriteString(stdin, line+"\n")
		require.NoError(t, err)
	}
	next := func() map[string]any {
		t.Helper()
		require.True(t, replies.Scan(), "a reply (%v)", replies.Err())
		var m map[string]any
		require.NoError(t, json.Unmarshal(replies.Bytes(), &m), "stdout carries only JSON-RPC: %q", replies.Text())
		return m
	}
	errCode := func(m map[string]any) float64 {
		t.Helper()
		e, ok := m["error"].(map[string]any)
		require.True(t, ok, "an error reply: %v", m)
		return e["code"].(float64)
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	require.NotNil(t, next()["result"])
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	huge := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"write","arguments":{"path":"x","content":"` +
		strings.Repeat("A", 100<<20) + `"}}}`
	tests := []struct {
		name string
		line string
		code float64
	}{
		{"garbage", "this is not json", -32700},
		{"binary noise", "\x00\x01\x02\xff", -32700},
		{"truncated json", `{"jsonrpc":"2.0","id":2,"method":`, -32700},
		{"a 100 MB line", huge, -32600},
		{"a batch", `[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, -32600},
		{"not a request", `{"hello":"world"}`, -32600},
		{"unknown method", `{"jsonrpc":"2.0","id":4,"method":"no/such"}`, -32601},
		{"unknown tool", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"rm_rf","arguments":{}}}`, -32602},
		{"wrong argument type", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"read","arguments":{"path":[42]}}}`, -32602},
		{"missing required argument", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"bash","arguments":{}}}`, -32602},
		{"arguments not an object", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"ls","arguments":"ls -la"}}`, -32602},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			send(tc.line)
			assert.Equal(t, tc.code, errCode(next()))
		})
	}
	assert.Empty(t, w.sandboxes(), "no malformed call reached a sandbox")

	// Still serving: a real call works.
	send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"read","arguments":{"path":"README.md"}}}`)
	m := next()
	assert.Equal(t, float64(10), m["id"])
	res, _ := json.Marshal(m["result"])
	assert.Equal(t, w.local("read", `{"path":"README.md"}`), fromWire(t, res))

	// Arguments are coerced as pi coerces them, and what stays invalid is named in
	// schema order, every time (conformance/args_test.go holds both to pi).
	send(`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"read","arguments":{"limit":"2","path":"README.md","offset":"1"}}}`)
	res, _ = json.Marshal(next()["result"])
	assert.Equal(t, w.local("read", `{"path":"README.md","offset":1,"limit":2}`), fromWire(t, res))
	for i := 0; i < 5; i++ {
		send(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"read","arguments":{"limit":{},"offset":"x","path":[1]}}}`)
		e, _ := next()["error"].(map[string]any)
		require.NotNil(t, e)
		assert.Equal(t, float64(-32602), e["code"])
		assert.Contains(t, e["message"], "Validation failed for tool \"read\":\n  - path: expected string, got array\n  - offset: expected number, got string\n  - limit: expected number, got object\n")
	}
}
