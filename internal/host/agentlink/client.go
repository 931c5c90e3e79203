package agentlink

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/jsonwire"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
)

// ClientProtocol is the MCP version the Client asks for in its initialize request.
const ClientProtocol = "2025-06-18"

// ErrClientClosed marks a call that was in flight, or made, after the client's
// connection ended; Client.Err says why it ended.
var ErrClientClosed = errors.New("the MCP connection ended")

// ClientOptions configure Dial.
type ClientOptions struct {
	Name, Version string // the client's implementation, sent in initialize
	// MaxLine bounds one message from the server; a longer one ends the connection
	// (mcpserver.MaxRequestLine when zero).
	MaxLine int
	// OnProgress receives notifications/progress whose token is a string, in the order
	// they arrive (before the result of their call).
	OnProgress func(token, message string, progress float64)
	Logger     *slog.Logger // nil: discard
}

// Client is a small MCP client over newline-delimited JSON-RPC, for the project's own
// agent: the initialize handshake, then tools/call with progress tokens and
// cancellation. A call's result comes back as the JSON the server wrote, not decoded
// into the SDK's types (mcpserver.CleanResult checks it), and a request's large strings go out as
// the literals they were read as (stand-ins spliced in on the way): relaying a
// call through the host costs neither a decode nor an encode. One goroutine reads,
// in order, so a call's progress notifications are all delivered before its result.
type Client struct {
	out    io.Writer
	closer io.Closer
	o      ClientOptions
	logger *slog.Logger

	wmu  sync.Mutex
	wbuf []byte

	mu      sync.Mutex
	next    int64
	pending map[int64]chan reply
	err     error         // why the connection ended, set before done is closed
	done    chan struct{} // closed when the connection ended
}

// reply is the answer to one request: its raw result, or its error.
type reply struct {
	result []byte
	err    error
}

// Dial starts a client reading in and writing out, and makes the initialize handshake
// within ctx. closer, if set, is closed with the client (the child process's pipes).
func Dial(ctx context.Context, in io.Reader, out io.Writer, closer io.Closer, o ClientOptions) (*Client, error) {
	if o.MaxLine <= 0 {
		o.MaxLine = mcpserver.MaxRequestLine
	}
	c := &Client{out: out, closer: closer, o: o, logger: o.Logger, pending: make(map[int64]chan reply), done: make(chan struct{})}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	go c.readLoop(jsonwire.NewLineReader(in))
	params, err := json.Marshal(map[string]any{
		"protocolVersion": ClientProtocol,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]string{"name": o.Name, "version": o.Version},
	})
	if err != nil {
		return nil, err
	}
	res, err := c.call(ctx, "initialize", [][]byte{params})
	if err == nil {
		if v, ok := jsonwire.Unquote(jsonwire.Member(res, "protocolVersion")); !ok || v == "" {
			err = fmt.Errorf("the initialize result names no protocol version: %s", clip(res))
		}
	}
	if err == nil {
		err = c.write([][]byte{[]byte(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}` + "\n")})
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("initializing the MCP session: %w", err)
	}
	return c, nil
}

// CallTool calls a tool and returns its result's raw JSON (unchecked: see CleanResult).
// args must be valid JSON (as a route's validation leaves them): they are written as
// they are, with the stand-ins of store they may hold replaced by their literals.
// A non-empty progressToken asks for progress notifications (ClientOptions.OnProgress).
// A JSON-RPC error is returned as a *jsonrpc.Error; cancelling ctx sends
// notifications/cancelled and returns ctx's error.
func (c *Client) CallTool(ctx context.Context, name string, args json.RawMessage, store *jsonwire.Store, progressToken string) (json.RawMessage, error) {
	head := append(make([]byte, 0, 64+len(name)+len(progressToken)), `{"name":`...)
	head = jsonwire.AppendString(head, name)
	if progressToken != "" {
		head = append(head, `,"_meta":{"progressToken":`...)
		head = jsonwire.AppendString(head, progressToken)
		head = append(head, '}')
	}
	args = jsonwire.TrimSpace(args)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if bytes.IndexByte(args, '\n') >= 0 {
		// JSON allows it between tokens, but a line is one message.
		return nil, fmt.Errorf("calling %s: the arguments hold a line break outside a string", name)
	}
	head = append(head, `,"arguments":`...)
	pieces := append([][]byte{head}, store.Segments(args)...)
	return c.call(ctx, "tools/call", append(pieces, []byte("}")))
}

// call sends a request whose params are the concatenated pieces and waits for its
// answer.
func (c *Client) call(ctx context.Context, method string, params [][]byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // not worth a request and its cancellation
	}
	ch := make(chan reply, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, c.closedErr()
	}
	c.next++
	id := c.next
	c.pending[id] = ch
	c.mu.Unlock()

	head := append(make([]byte, 0, 64), `{"jsonrpc":"2.0","id":`...)
	head = strconv.AppendInt(head, id, 10)
	head = append(head, `,"method":`...)
	head = jsonwire.AppendString(head, method)
	head = append(head, `,"params":`...)
	if err := c.write(append(append([][]byte{head}, params...), []byte("}\n"))); err != nil {
		// Part of the message may be on the wire: the stream is no longer framed.
		err = fmt.Errorf("writing the %s request: %w", method, err)
		c.end(err)
		return nil, err
	}
	select {
	case r := <-ch:
		return r.result, r.err
	case <-ctx.Done():
		if c.forget(id) {
			line := append(make([]byte, 0, 96), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`...)
			line = strconv.AppendInt(line, id, 10)
			line = append(line, `,"reason":`...)
			line = jsonwire.AppendString(line, context.Cause(ctx).Error())
			// Best effort: a connection that broke ends the call anyway.
			_ = c.write([][]byte{append(line, "}}\n"...)})
		}
		return nil, ctx.Err()
	}
}

// forget drops a pending call; it reports whether the call was still pending.
func (c *Client) forget(id int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.pending[id]
	delete(c.pending, id)
	return ok
}

// write sends one message made of pieces: small ones in one write, a large one piece by
// piece under the lock, so the pipe sees it whole without its being joined in memory.
func (c *Client) write(pieces [][]byte) error {
	n := 0
	for _, p := range pieces {
		n += len(p)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if n <= 64<<10 {
		buf := c.wbuf[:0]
		for _, p := range pieces {
			buf = append(buf, p...)
		}
		c.wbuf = buf
		_, err := c.out.Write(buf)
		return err
	}
	if n >= mcpserver.LineSizeMin {
		hint := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":%q,"params":{"bytes":%d}}`+"\n", mcpserver.LineSizeMethod, n)
		if _, err := c.out.Write(hint); err != nil {
			return err
		}
	}
	for _, p := range pieces {
		if _, err := c.out.Write(p); err != nil {
			return err
		}
	}
	return nil
}

func (c *Client) readLoop(r *jsonwire.LineReader) {
	for {
		line, tooLong, err := r.ReadLine(c.o.MaxLine)
		if tooLong {
			c.end(fmt.Errorf("a message longer than %d bytes", c.o.MaxLine))
			return
		}
		if msg := bytes.TrimSpace(line); len(msg) > 0 {
			if herr := c.handle(msg); herr != nil {
				c.end(herr)
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			c.end(fmt.Errorf("reading: %w", err))
			return
		}
	}
}

// handle dispatches one message; an error (a line that is not one JSON-RPC message, an
// answer to no call of ours) ends the connection: the peer is not speaking MCP.
func (c *Client) handle(line []byte) error {
	env, err := mcpserver.ParseEnvelope(line)
	if err != nil {
		return fmt.Errorf("undecodable message: %w", err)
	}
	switch {
	case env.Method != nil && env.ID == nil:
		method, _ := jsonwire.Unquote(env.Method)
		if method == "notifications/progress" && c.o.OnProgress != nil {
			var p struct {
				Token    any     `json:"progressToken"`
				Progress float64 `json:"progress"`
				Message  string  `json:"message"`
			}
			if json.Unmarshal(env.Params, &p) == nil {
				if tok, ok := p.Token.(string); ok {
					c.o.OnProgress(tok, p.Message, p.Progress)
				}
			}
		}
		return nil // logging and other notifications: nothing to do
	case env.Method != nil:
		// A request from the server (ping, roots, sampling): this client offers none
		// of those capabilities, ping aside.
		method, _ := jsonwire.Unquote(env.Method)
		out := append(make([]byte, 0, 128), `{"jsonrpc":"2.0","id":`...)
		out = append(out, env.ID...)
		if method == "ping" {
			out = append(out, `,"result":{}}`...)
		} else {
			c.logger.Debug("refused a request of the server", "method", method)
			out = append(out, `,"error":{"code":-32601,"message":"Method not found"}}`...)
		}
		// Written aside: the read loop must not wait on a peer that may be waiting for
		// it to read.
		go func() { _ = c.write([][]byte{append(out, '\n')}) }()
		return nil
	}
	id, err := strconv.ParseInt(string(env.ID), 10, 64)
	if err != nil {
		return fmt.Errorf("an answer with id %s, which no request of this client has", clip(env.ID))
	}
	c.mu.Lock()
	ch, ok := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if !ok {
		if id > 0 && id <= c.lastID() {
			c.logger.Debug("dropped the answer to a cancelled call", "id", id)
			return nil
		}
		return fmt.Errorf("an answer with id %d, which no request of this client has", id)
	}
	switch {
	case env.Error != nil:
		var e jsonrpc.Error
		if err := json.Unmarshal(env.Error, &e); err != nil || e.Message == "" {
			e = jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "error response: " + clip(env.Error)}
		}
		ch <- reply{err: &e}
	case env.Result != nil:
		ch <- reply{result: env.Result}
	default:
		ch <- reply{err: fmt.Errorf("%w: an answer without result or error", mcpserver.ErrInvalidResult)}
	}
	return nil
}

func (c *Client) lastID() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.next
}

// end fails every pending call with why the connection ended.
func (c *Client) end(why error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = why
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	for _, ch := range pending {
		ch <- reply{err: c.closedErr()}
	}
	close(c.done)
	if c.closer != nil {
		_ = c.closer.Close()
	}
}

func (c *Client) closedErr() error {
	return fmt.Errorf("%w: %v", ErrClientClosed, c.err)
}

// Done is closed when the connection has ended.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err says why the connection ended (nil while it has not).
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the client's side of the connection (its closer: the server then sees
// the end of its input and exits); calls in flight fail.
func (c *Client) Close() error {
	var err error
	if c.closer != nil {
		err = c.closer.Close()
	}
	c.end(errors.New("closed by the client"))
	return err
}

// clip shortens raw JSON for an error message.
func clip(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}
