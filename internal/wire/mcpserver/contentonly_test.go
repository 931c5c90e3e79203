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

// detailed answers with text and details, as pi's read does when it truncates.
type detailed struct{}

const detailedJSON = `{"_meta":{"pi-sbx/x":1},"content":[{"type":"text","text":"the text"}],"structuredContent":{"truncation":{"truncated":true}},"isError":true}`

func (detailed) CallTool(context.Context, Call) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the text"}},
		StructuredContent: map[string]any{"truncation": map[string]any{"truncated": true}}, IsError: true}, nil
}

// detailedRaw gives its result as JSON: its calls take the fast path (its CallTool's
// answer would fail the test).
type detailedRaw struct{}

func (detailedRaw) CallTool(context.Context, Call) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "not the fast path"}}}, nil
}

func (detailedRaw) CallToolRaw(context.Context, Call) (json.RawMessage, error) {
	return json.RawMessage(detailedJSON), nil
}

// TestContentOnlyRoutesLeaveDetailsOut: on both paths (the SDK's, and the fast path of a
// RawCaller) a content-only route answers with the content, _meta and isError and
// without structuredContent; other routes and unlisted ones keep it.
func TestContentOnlyRoutesLeaveDetailsOut(t *testing.T) {
	method := &tools.Tool{Name: "pi_sbx_status", Schema: tools.Object(nil, nil)}
	for _, tc := range []struct {
		name        string
		caller      Caller
		contentOnly bool
	}{
		{"sdk path", detailed{}, false},
		{"sdk path, content only", detailed{}, true},
		{"fast path", detailedRaw{}, false},
		{"fast path, content only", detailedRaw{}, true},
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
