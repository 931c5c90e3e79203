// Package backend is the MCP face of the tools: an MCP server (official Go SDK) that
// takes routes — each a tool description and the Caller that runs it — plus the stdio
// plumbing that keeps serving through malformed input.
//
// The same server runs at both ends: on the host (`serve`: pi's seven routed to the
// agent channel into the sandbox, the docker_* tools to deploy/) and inside the VM
// (`agent`: the seven routed to Local, the implementations themselves). backend links
// descriptions only (tools/), never an implementation.
package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-sbx/pi-sbx-backend/bigarg"
	"github.com/pi-sbx/pi-sbx-backend/result"
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

// StandInTaker is implemented by Callers that take arguments whose large strings are
// bigarg stand-ins, because they splice them back (the agent channel, when it writes
// the request) or resolve them (Local, when a tool decodes its arguments) with the store
// in the call's context. Any other Caller gets the arguments whole.
type StandInTaker interface{ TakesStandIns() }

// Route sends calls of one tool to the Caller that runs it.
type Route struct {
	Tool   *tools.Tool
	Caller Caller
	// Unlisted routes are callable with tools/call but left out of tools/list: serve
	// methods a client uses (pi's `!` commands on a pty) that the model must not see.
	Unlisted bool
}

// Routes routes every tool of list to caller.
func Routes(list []*tools.Tool, caller Caller) []Route {
	out := make([]Route, 0, len(list))
	for _, t := range list {
		out = append(out, Route{Tool: t, Caller: caller})
	}
	return out
}

// Options configure NewServer.
type Options struct {
	Name    string // implementation name reported to clients
	Version string
	Logger  *slog.Logger // nil: discard
}

// Server is the MCP server of NewServer, with its routes, which Serve's transport
// answers tools/call with itself (see Transport.calls): the SDK's per-request decoding
// was most of a small call's cost. Everything else goes through the SDK.
type Server struct {
	*mcp.Server
	routes map[string]*route
	impl   *mcp.Implementation
	logger *slog.Logger
}

type route struct {
	tool   *tools.Tool
	caller Caller
	logger *slog.Logger
}

// NewServer returns an MCP server offering the routes' tools (their names, descriptions
// and schemas) and sending each call, validated against its description, to its route's
// caller. A route without a tool or caller, a tool with a broken schema and two routes of
// one name are errors.
func NewServer(routes []Route, o Options) (*Server, error) {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	impl := &mcp.Implementation{Name: o.Name, Version: o.Version}
	srv := mcp.NewServer(impl, &mcp.ServerOptions{
		Logger:       logger,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	out := &Server{Server: srv, routes: make(map[string]*route, len(routes)), impl: impl, logger: logger}
	seen := make(map[string]bool, len(routes))
	unlisted := map[string]bool{}
	for _, r := range routes {
		if r.Tool == nil || r.Caller == nil {
			return nil, fmt.Errorf("route %+v: needs a tool and a caller", r)
		}
		if seen[r.Tool.Name] {
			return nil, fmt.Errorf("tool %s routed twice", r.Tool.Name)
		}
		seen[r.Tool.Name] = true
		if err := r.Tool.Resolve(); err != nil {
			return nil, err
		}
		if r.Unlisted {
			unlisted[r.Tool.Name] = true
		}
		rt := &route{tool: r.Tool, caller: r.Caller, logger: logger}
		out.routes[r.Tool.Name] = rt
		srv.AddTool(&mcp.Tool{Name: r.Tool.Name, Description: r.Tool.Description, InputSchema: r.Tool.Schema}, rt.handle)
	}
	if len(unlisted) > 0 {
		srv.AddReceivingMiddleware(hideTools(unlisted))
	}
	return out, nil
}

// hideTools drops the named tools from tools/list results; tools/call still reaches them.
func hideTools(names map[string]bool) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil && method == "tools/list" {
				kept := make([]*mcp.Tool, 0, len(lr.Tools))
				for _, t := range lr.Tools {
					if !names[t.Name] {
						kept = append(kept, t)
					}
				}
				lr.Tools = kept
			}
			return res, err
		}
	}
}

// handle is the route's SDK tool handler.
func (r *route) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var progress Progress
	if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
		progress = func(msg string, total float64) {
			// Best effort: a client that went away must not fail the call.
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Message: msg, Progress: total})
		}
	}
	return r.call(ctx, req.Params.Arguments, progress)
}

// call validates raw arguments and runs them with the route's caller. An error is a
// JSON-RPC error (or the call's cancellation); a failed sandbox is the tool's error.
func (r *route) call(ctx context.Context, raw json.RawMessage, progress Progress) (*mcp.CallToolResult, error) {
	t, caller, logger := r.tool, r.caller, r.logger
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	args, err := t.Validate(raw)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	if _, ok := caller.(StandInTaker); !ok {
		args = bigarg.From(ctx).Splice(args) // the caller gets the arguments whole
	}
	res, err := caller.CallTool(ctx, t.Name, args, progress)
	if errors.Is(err, tools.ErrUsage) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	if err != nil && ctx.Err() != nil {
		// The call was cancelled (the client's notifications/cancelled, or the session
		// ending): not a sandbox failure, and nothing to report. The transport drops
		// the answer to a cancelled request.
		return nil, ctx.Err()
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

// Runner runs a call in this process (tools/local's Registry): decoding, validation and
// the implementation. backend only knows this interface, so the host never links one.
type Runner interface {
	Call(ctx context.Context, cwd, name string, raw []byte, env tools.Env) (result.Result, error)
}

// Local runs calls with a Runner in this process: the agent inside the VM, and
// `tool --local`'s equivalent for tests.
type Local struct {
	Registry Runner
	Cwd      string   // working directory of every call
	Vars     []string // extra KEY=VALUE for commands
}

// ProgressMeta is the result _meta key under which Local reports the progress total of
// the last notification it sent for the call. The SDK delivers notifications
// concurrently with results, so a relaying client (the host's agent channel) waits for
// that total before it forwards the result, and the stream arrives whole and first.
const ProgressMeta = "pi-sbx-backend/progress"

// TakesStandIns implements StandInTaker: the Runner's tools resolve stand-ins when they
// decode their arguments (tools/local).
func (l *Local) TakesStandIns() {}

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
