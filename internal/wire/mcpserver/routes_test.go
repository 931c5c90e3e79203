package mcpserver

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// named answers every call with "<who>:<tool>", recording the arguments it got.
type named struct {
	who  string
	args []string
}

func (n *named) CallTool(_ context.Context, c Call) (json.RawMessage, error) {
	n.args = append(n.args, string(c.Args))
	return json.Marshal(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: n.who + ":" + c.Name}}})
}

func TestRoutesSendEachToolToItsCaller(t *testing.T) {
	vm, host, pty := &named{who: "vm"}, &named{who: "host"}, &named{who: "pty"}
	hostTool := &tools.Tool{Name: "docker_ps", Schema: tools.Object(nil, nil)}
	hidden := &tools.Tool{Name: "user_bash", Schema: tools.Object([]string{"command"}, nil)}
	routes := append(Routes(tools.Pi(), vm),
		Route{Tool: hostTool, Caller: host},
		Route{Tool: hidden, Caller: pty, Unlisted: true})
	srv, err := NewServer(routes, Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	defer cs.Close()

	list, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	assert.ElementsMatch(t, []string{"bash", "docker_ps", "edit", "find", "grep", "ls", "read", "write"}, names, "unlisted routes are not offered")

	text := func(name, args string) string {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		require.NoError(t, err, name)
		return res.Content[0].(*mcp.TextContent).Text
	}
	assert.Equal(t, "vm:read", text("read", `{"path":"a"}`))
	assert.Equal(t, "host:docker_ps", text("docker_ps", `{}`))
	assert.Equal(t, "pty:user_bash", text("user_bash", `{"command":"ls"}`), "an unlisted route is callable")
	// Validation happens against the route's description before the caller sees anything.
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "user_bash", Arguments: json.RawMessage(`{}`)})
	assert.ErrorContains(t, err, "command")
	assert.Equal(t, []string{`{"command":"ls"}`}, pty.args)
}

func TestNewServerRejectsBadRoutes(t *testing.T) {
	c := &named{}
	tests := []struct {
		name   string
		routes []Route
		want   string
	}{
		{"duplicate", []Route{{Tool: tools.Read(), Caller: c}, {Tool: tools.Read(), Caller: c}}, "routed twice"},
		{"no caller", []Route{{Tool: tools.Read()}}, "needs a tool and a caller"},
		{"no tool", []Route{{Caller: c}}, "needs a tool and a caller"},
		{"no schema", []Route{{Tool: &tools.Tool{Name: "x"}, Caller: c}}, "no schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewServer(tt.routes, Options{})
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

// newServer serves pi's seven tools, every one through caller.
func newServer(t testing.TB, caller Caller, o Options) *Server {
	t.Helper()
	routes := Routes(tools.Pi(), caller)
	if l, ok := caller.(*Local); ok {
		routes = l.Routes(tools.Pi()) // as the agent's
	}
	srv, err := NewServer(routes, o)
	require.NoError(t, err)
	return srv
}
