//go:build linux

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

// detailed answers with text and details, as pi's read does when it truncates, in the
// SDK's types.
var detailed = Typed(func(context.Context, Call) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the text"}},
		StructuredContent: map[string]any{"truncation": map[string]any{"truncated": true}}, IsError: true}, nil
})

const detailedJSON = `{"_meta":{"pi-sbx/x":1},"content":[{"type":"text","text":"the text"}],"structuredContent":{"truncation":{"truncated":true}},"isError":true}`

// detailedRaw gives the same result as the JSON it wrote.
type detailedRaw struct{}

func (detailedRaw) CallTool(context.Context, Call) (json.RawMessage, error) {
	return json.RawMessage(detailedJSON), nil
}

// TestContentOnlyRoutesLeaveDetailsOut: for a Typed caller and one that writes its JSON,
// on the transport's route and on the SDK's (calls before initialize), a content-only
// route answers with the content, _meta and isError and without structuredContent; other
// routes and unlisted ones keep it.
func TestContentOnlyRoutesLeaveDetailsOut(t *testing.T) {
	method := &tools.Tool{Name: "pi_sbx_status", Schema: tools.Object(nil, nil)}
	for _, tc := range []struct {
		name        string
		caller      Caller
		contentOnly bool
	}{
		{"typed", detailed, false},
		{"typed, content only", detailed, true},
		{"raw", detailedRaw{}, false},
		{"raw, content only", detailedRaw{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			routes := append(Routes(tools.Pi(), tc.caller), Route{Tool: method, Caller: tc.caller, Unlisted: true})
			if tc.contentOnly {
				routes = ContentOnly(routes)
			}
			srv, err := NewServer(routes, Options{})
			require.NoError(t, err)
			lines := serveAfterInit(t, srv, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"a"}}}`+"\n"+
				`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"pi_sbx_status","arguments":{}}}`+"\n")
			for id, kept := range map[string]bool{"1": !tc.contentOnly, "2": true} {
				reply, ok := replyTo(t, lines, id)
				require.True(t, ok, "no reply %s in %q", id, lines)
				var res map[string]json.RawMessage
				require.NoError(t, json.Unmarshal(reply["result"], &res))
				assert.JSONEq(t, `[{"type":"text","text":"the text"}]`, string(res["content"]))
				assert.Equal(t, "true", string(res["isError"]))
				if kept {
					assert.JSONEq(t, `{"truncation":{"truncated":true}}`, string(res["structuredContent"]), "call %s", id)
				} else {
					assert.NotContains(t, res, "structuredContent", "call %s", id)
				}
			}
		})
	}
}

// TestContentOnlyOnTheSDKPath: the SDK's own handler (an in-memory connection, as a
// caller of the server package may make) decodes the caller's JSON and keeps a
// content-only route's structuredContent out too.
func TestContentOnlyOnTheSDKPath(t *testing.T) {
	for _, contentOnly := range []bool{false, true} {
		routes := Routes(tools.Pi(), detailedRaw{})
		if contentOnly {
			routes = ContentOnly(routes)
		}
		srv, err := NewServer(routes, Options{})
		require.NoError(t, err)
		ctx := context.Background()
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		require.NoError(t, err)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(ctx, ct, nil)
		require.NoError(t, err)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"path": "a"}})
		require.NoError(t, err)
		assert.Equal(t, "the text", res.Content[0].(*mcp.TextContent).Text)
		assert.True(t, res.IsError)
		assert.Equal(t, !contentOnly, res.StructuredContent != nil, "content only: %v", contentOnly)
		cs.Close()
		ss.Close()
	}
}

func TestWithoutStructured(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{detailedJSON, `{"_meta":{"pi-sbx/x":1},"content":[{"type":"text","text":"the text"}],"isError":true}`},
		{`{"structuredContent":{},"content":[]}`, `{"content":[]}`},
		{`{"content":[]}`, `{"content":[]}`},
		{`{"content":[],"structuredContent":{"a":"}"}}`, `{"content":[]}`},
		{`{"a\"b":1,"structuredContent":{}}`, `{"a\"b":1}`},
	} {
		got, err := withoutStructured(json.RawMessage(tc.in))
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, string(got), tc.in)
	}
}
