//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestToolsCannotReachTheAgentsOwnStdio: the in-VM agent speaks MCP on its stdin and
// stdout, and its tools run in its process. A read, grep or edit of /dev/stdin or
// /proc/self/fd/0 must not take requests off the channel, a write to /dev/stdout or
// /proc/self/fd/1 must not put bytes into it: those paths are /dev/null, as for pi with
// no terminal. Every call (those, and ordinary ones made at the same time) is answered,
// the session goes on, and serve still ends when its stdin does.
func TestToolsCannotReachTheAgentsOwnStdio(t *testing.T) {
	w := newWorld(t)
	cs, cmd, stderr := w.serve(nil, nil)
	call(t, cs, "ls", `{}`) // the agent runs

	empty := text(call(t, cs, "read", `{"path":"/dev/null"}`))
	probes := []struct{ name, args, want string }{
		{"read", `{"path":"/dev/stdin"}`, empty},
		{"read", `{"path":"/proc/self/fd/0"}`, empty},
		{"read", `{"path":"/dev/fd/0"}`, empty},
		{"grep", `{"pattern":"jsonrpc","path":"/dev/stdin"}`, "No matches found"},
		{"write", `{"path":"/dev/stdout","content":"{\"jsonrpc\":\"2.0\",\"id\":424242,\"result\":{}}\n"}`, ""},
		{"write", `{"path":"/proc/self/fd/1","content":"garbage\n"}`, ""},
		{"write", `{"path":"/dev/stderr","content":"noise\n"}`, ""},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for round := range 3 {
		for i, p := range probes {
			wg.Add(2)
			go func() {
				defer wg.Done()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: p.name, Arguments: json.RawMessage(p.args)})
				if !assert.NoError(t, err, "%s %s: answered", p.name, p.args) {
					return
				}
				if p.want != "" {
					assert.Equal(t, p.want, text(res), "%s %s", p.name, p.args)
				} else {
					assert.False(t, res.IsError, "%s %s: %s", p.name, p.args, text(res))
				}
			}()
			go func() { // an ordinary call beside it is not disturbed
				defer wg.Done()
				path := fmt.Sprintf("f%d-%d.txt", round, i)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write", Arguments: map[string]any{"path": path, "content": "x"}})
				if assert.NoError(t, err) {
					assert.Equal(t, "Successfully wrote to "+path, text(res))
				}
			}()
		}
	}
	wg.Wait()
	assert.Equal(t, "f0-0.txt", text(call(t, cs, "find", `{"pattern":"f0-0.txt"}`)), "the session goes on")

	require.NoError(t, cs.Close())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not end after its stdin did\n%s", stderr.String())
	}
}
