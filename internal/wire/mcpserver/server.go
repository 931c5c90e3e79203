// Package mcpserver is the MCP face of the tools: an MCP server (official Go SDK) that
// takes routes — each a tool description and the Caller that runs it — served over
// newline-delimited JSON: a Transport frames the messages, and Serve's end of the
// connection keeps serving through malformed input and relays the routes' calls to
// their callers, answering with the JSON they give.
//
// The same server runs at both ends: on the host (`serve`: pi's seven routed to the
// agent channel into the sandbox, the docker_* tools to deploy/) and inside the VM
// (`agent`: the seven routed to Local, over vmagent's implementations). mcpserver links
// descriptions only (tools/), never an implementation.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/jsonwire"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// Progress receives streamed output of a running call: message is the new text since the
// last report, total the number of bytes reported so far.
type Progress func(message string, total float64)

// Call is one validated tool call as a Caller gets it.
type Call struct {
	Name string
	Args json.RawMessage
	// Client is the name the MCP client gave in initialize (clientInfo.name); empty
	// when unknown.
	Client string
	// ID is the client's id for the call: the _meta CallIDMeta it sent (pi's tool-call
	// id), else the JSON-RPC request id.
	ID string
	// Progress receives the call's streamed output; nil when the client asked for none.
	Progress Progress
	// StandIns holds the large strings of Args that the relay route set aside (jsonwire
	// stand-ins); only the caller of a route with StandIns set is given such arguments,
	// every other gets them whole and a nil store.
	StandIns *jsonwire.Store
}

// Caller runs a validated tool call somewhere and gives its result as the JSON of an
// MCP CallToolResult, which is written to the client as it is: the agent channel relays
// the agent's answer (checked by CleanResult) and Local encodes pi's result directly,
// instead of building the SDK's types to have them encoded — on a small call that was
// most of the cost at each end. Callers that build the SDK's types use Typed. An error
// means the call could not be run (the sandbox is gone, the channel broke); a tool's own
// failure is a result with isError set. Errors wrapping tools.ErrUsage become JSON-RPC
// invalid-params errors.
type Caller interface {
	CallTool(ctx context.Context, c Call) (json.RawMessage, error)
}

// Typed is a Caller for the callers that build the SDK's result types (the host's own
// tools and methods): each result is validated (Validate) and encoded once. It takes
// its arguments whole.
type Typed func(ctx context.Context, c Call) (*mcp.CallToolResult, error)

// CallTool implements Caller.
func (f Typed) CallTool(ctx context.Context, c Call) (json.RawMessage, error) {
	res, err := f(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := Validate(res); err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

// Route sends calls of one tool to the Caller that runs it.
type Route struct {
	Tool   *tools.Tool
	Caller Caller
	// Unlisted routes are callable with tools/call but left out of tools/list: serve
	// methods a client uses (pi's `!` commands on a pty) that the model must not see.
	Unlisted bool
	// ContentOnly results leave structuredContent out (contentonly.go).
	ContentOnly bool
	// StandIns: the caller takes arguments whose large strings are stand-ins, as the
	// relay route set them aside, because it splices them back (the agent channel, as
	// it writes the request) or resolves them (Local, as a tool decodes its arguments)
	// with Call.StandIns. Any other caller gets the arguments whole. A route says it,
	// not its caller: the callers that wrap another (audit, journal) pass the arguments
	// on as they got them.
	StandIns bool
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
	// ValidatedInput says every line Serve reads was validated as JSON by the peer that
	// wrote it: the agent's input is what the host validated and forwarded. Lines are
	// then walked for their members without being checked again (a large write is not
	// validated twice); one that does not walk as a message is decoded the checking way,
	// which words its error.
	ValidatedInput bool
}

// Server is the MCP server of NewServer, with its routes. Serve answers their tools/call
// on the relay route (relay.go), with the JSON the callers give; everything else goes
// through the SDK.
type Server struct {
	*mcp.Server
	routes map[string]*route
	impl   *mcp.Implementation
	logger *slog.Logger
	// validated: Options.ValidatedInput.
	validated bool
	// parsed: the routes' tools.Tool.Parsed members, never set aside.
	parsed []string
}

type route struct {
	tool   *tools.Tool
	caller Caller
	logger *slog.Logger
	// contentOnly: results leave structuredContent out (contentonly.go).
	contentOnly bool
	// standIns: the caller takes stand-ins (Route.StandIns).
	standIns bool
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
	out := &Server{Server: srv, routes: make(map[string]*route, len(routes)), impl: impl, logger: logger, validated: o.ValidatedInput}
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
		for _, m := range r.Tool.Parsed {
			if !slices.Contains(out.parsed, m) {
				out.parsed = append(out.parsed, m)
			}
		}
		rt := &route{tool: r.Tool, caller: r.Caller, logger: logger, contentOnly: r.ContentOnly, standIns: r.StandIns}
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

// handle is the route's SDK tool handler. The SDK's calls never hold stand-ins: only
// the relay route sets strings aside.
func (r *route) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var progress Progress
	if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
		progress = func(msg string, total float64) {
			// Best effort: a client that went away must not fail the call.
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Message: msg, Progress: total})
		}
	}
	call := Call{Args: req.Params.Arguments, Progress: progress, ID: fmt.Sprint(req.Params.Meta[CallIDMeta])}
	if call.ID == "<nil>" {
		call.ID = ""
	}
	if req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil {
			call.Client = p.ClientInfo.Name
		}
	}
	if ci, ok := req.Params.Meta[mcp.MetaKeyClientInfo].(map[string]any); ok && call.Client == "" {
		call.Client, _ = ci["name"].(string) // a stateless call names its client itself
	}
	c, err := r.prepare(call)
	if err != nil {
		return nil, err
	}
	raw, err := r.caller.CallTool(ctx, c)
	if err != nil {
		return r.failure(ctx, err)
	}
	res := new(mcp.CallToolResult)
	if err := json.Unmarshal(raw, res); err != nil {
		return r.failure(ctx, fmt.Errorf("%w: %w", ErrInvalidResult, err))
	}
	switch sc := jsonwire.Member(raw, "structuredContent"); {
	case r.contentOnly:
		res.StructuredContent = nil
	case sc != nil:
		// As the caller wrote it: decoded into a map, its members would be sorted.
		res.StructuredContent = json.RawMessage(sc)
	}
	return res, nil
}

// prepare validates the call's raw arguments against the route's tool; the caller of a
// route without StandIns gets them spliced back.
func (r *route) prepare(c Call) (Call, error) {
	raw := c.Args
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	args, err := r.tool.Validate(raw)
	if err != nil {
		return c, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	if !r.standIns {
		args = c.StandIns.Splice(args) // the caller gets the arguments whole
		c.StandIns = nil
	}
	c.Name, c.Args = r.tool.Name, args
	return c, nil
}

// failure maps a caller's error: usage errors become JSON-RPC invalid-params errors, a
// cancelled call its context's error; any other failure is the sandbox's, logged and
// answered as the tool's error. Nothing runs elsewhere.
func (r *route) failure(ctx context.Context, err error) (*mcp.CallToolResult, error) {
	switch {
	case errors.Is(err, tools.ErrUsage):
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	case ctx.Err() != nil:
		// The call was cancelled (the client's notifications/cancelled, or the session
		// ending): not a sandbox failure, and nothing to report. The connection
		// drops the answer to a cancelled request.
		return nil, ctx.Err()
	}
	r.logger.Warn("tool call failed", "tool", r.tool.Name, "error", err)
	// Thrown: the pi package throws it, as pi's tool throws what stops it from running.
	return &mcp.CallToolResult{
		Meta:    mcp.Meta{result.ThrownMeta: true},
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("sandbox error: %v", err)}},
	}, nil
}

// Runner runs a call in this process (vmagent's Registry): decoding and the
// implementation, on arguments the route has validated. mcpserver only knows this
// interface, so the host never links one.
type Runner interface {
	Run(ctx context.Context, cwd, name string, args []byte, env tools.Env) (result.Result, error)
}

// Local runs calls with a Runner in this process: the agent inside the VM, and
// `tool --local`'s equivalent for tests. Its routes may take stand-ins (Route.StandIns):
// the Runner's tools resolve them as they decode their arguments (vmagent).
type Local struct {
	Registry Runner
	Cwd      string   // working directory of every call
	Vars     []string // extra KEY=VALUE for commands
}

// Routes routes every tool of list to l, taking stand-ins (Route.StandIns).
func (l *Local) Routes(list []*tools.Tool) []Route {
	out := Routes(list, l)
	for i := range out {
		out[i].StandIns = true
	}
	return out
}

// CallIDMeta is the request _meta key under which a client may give its own id for a
// tools/call (the pi package sends pi's tool-call id): audit logs name the call by it.
const CallIDMeta = "pi-sbx/callId"

// ProgressMeta is the result _meta key under which Local reports the progress total of
// the last notification it sent for the call, so that a relaying client (the host's
// agent channel) can wait for that total before it forwards the result, and the stream
// arrives whole and first even where notifications and results are delivered
// concurrently (the SDK's own server path).
const ProgressMeta = "pi-sbx-backend/progress"

// run runs c and returns pi's result and the progress total last reported.
func (l *Local) run(ctx context.Context, c Call) (result.Result, int, error) {
	env := tools.Env{Vars: l.Vars}
	if c.StandIns != nil {
		env.Decode = func(args []byte, v any) error {
			if err := json.Unmarshal(args, v); err != nil {
				return err
			}
			return c.StandIns.Resolve(v)
		}
	}
	var sent int // the last total reported; OnProgress calls are sequential
	if c.Progress != nil {
		env.OnProgress = func(text string, total int) {
			if text != "" {
				c.Progress(text, float64(total))
				sent = total
			}
		}
	}
	r, err := l.Registry.Run(ctx, l.Cwd, c.Name, c.Args, env)
	return r, sent, err
}

// CallTool implements Caller: pi's result encoded as the SDK would encode it.
func (l *Local) CallTool(ctx context.Context, c Call) (json.RawMessage, error) {
	r, sent, err := l.run(ctx, c)
	if err != nil {
		return nil, err
	}
	// Sized for the usual case (text with a few escapes), so the encoding does not
	// grow the buffer by copies.
	size := 128
	for _, b := range r.Content {
		size += len(b.Text) + len(b.Text)/16 + len(b.Data) + 64
	}
	return AppendResult(make([]byte, 0, size), r, sent)
}
