// Package backend is the MCP face of the seven tools: an MCP server (official Go SDK)
// whose tools/list is pi's seven tools and whose tools/call goes to a Caller, plus the
// stdio plumbing that keeps serving through malformed input.
//
// The same server runs at both ends: on the host (`serve`, Caller = the agent channel
// into the sandbox) and inside the VM (`agent`, Caller = Local, the tools themselves).
package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-sbx/pi-sbx-backend/tools"
)

// Progress receives streamed output of a running call: message is the new text since the
// last report, total the number of bytes reported so far.
type Progress func(message string, total float64)

// Caller runs a validated tool call somewhere. An error means the call could not be run
// (the sandbox is gone, the channel broke); a tool's own failure is a result with
// IsError set. Errors wrapping tools.ErrUsage become JSON-RPC invalid-params errors.
type Caller interface {
	CallTool(ctx context.Context, name string, args json.RawMessage, progress Progress) (*mcp.CallToolResult, error)
}

// Options configure NewServer.
type Options struct {
	Name    string // implementation name reported to clients
	Version string
	Logger  *slog.Logger // nil: discard
}

// NewServer returns an MCP server exposing the registry's tools (pi's names,
// descriptions and schemas) and forwarding every call to caller.
func NewServer(reg *tools.Registry, caller Caller, o Options) *mcp.Server {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: o.Name, Version: o.Version}, &mcp.ServerOptions{
		Logger:       logger,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	for _, t := range reg.List() {
		srv.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.Schema}, handler(t, caller, logger))
	}
	return srv
}

func handler(t *tools.Tool, caller Caller, logger *slog.Logger) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		raw := req.Params.Arguments
		if len(raw) == 0 || string(raw) == "null" {
			raw = json.RawMessage("{}")
		}
		args, err := t.Validate(raw)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		var progress Progress
		if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
			progress = func(msg string, total float64) {
				// Best effort: a client that went away must not fail the call.
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Message: msg, Progress: total})
			}
		}
		res, err := caller.CallTool(ctx, t.Name, args, progress)
		if errors.Is(err, tools.ErrUsage) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		if err == nil {
			err = Validate(res)
		}
		if err != nil {
			// The sandbox failed: say so as the tool's error. Nothing runs elsewhere.
			logger.Warn("tool call failed", "tool", t.Name, "error", err)
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("sandbox error: %v", err)}}}, nil
		}
		return res, nil
	}
}

// Local runs calls with the registry in this process: the agent inside the VM, and
// `tool --local`'s equivalent for tests.
type Local struct {
	Registry *tools.Registry
	Cwd      string   // working directory of every call
	Vars     []string // extra KEY=VALUE for commands
}

// ProgressMeta is the result _meta key under which Local reports the progress total of
// the last notification it sent for the call. The SDK delivers notifications
// concurrently with results, so a relaying client (the host's agent channel) waits for
// that total before it forwards the result, and the stream arrives whole and first.
const ProgressMeta = "pi-sbx-backend/progress"

// CallTool implements Caller.
func (l *Local) CallTool(ctx context.Context, name string, args json.RawMessage, progress Progress) (*mcp.CallToolResult, error) {
	env := tools.Env{Vars: l.Vars}
	var sent int // the last total reported; OnProgress calls are sequential
	if progress != nil {
		env.OnProgress = func(text string, total int) {
			if text != "" {
				progress(text, float64(total))
				sent = total
			}
		}
	}
	r, err := l.Registry.Call(ctx, l.Cwd, name, args, env)
	if err != nil {
		return nil, err
	}
	res, err := ToMCP(r)
	if err == nil && sent > 0 {
		res.Meta = mcp.Meta{ProgressMeta: sent}
	}
	return res, err
}
