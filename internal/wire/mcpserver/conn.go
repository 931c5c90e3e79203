package mcpserver

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/jsonwire"
)

// DefaultMaxInflight bounds the bytes of request lines held at once by calls that have
// been read but not answered. Beyond it the server stops reading (the client's writes
// block) until earlier calls finish: five concurrent 30 MB writes are taken two or three
// at a time instead of all being held, each with its decoding copies.
const DefaultMaxInflight = 96 << 20

// This file is a server's end of a connection, as Serve runs it: it reads and writes
// with a Transport's framing (framing.go), and between the framing and the SDK it
//   - answers a line that is not one JSON-RPC message (garbage, oversized, a batch, an
//     id the SDK cannot echo exactly) with a JSON-RPC error, and serves on;
//   - tracks requests by id, so the end of input waits for every answer, and a request
//     the peer cancelled (notifications/cancelled) is not answered, as MCP asks;
//   - holds the calls read but not answered to a byte budget, and reads no further
//     calls while the peer does not read its answers (calls.go);
//   - routes each tools/call: a call of one of the server's routes, once the session is
//     initialized, takes the relay route (relay.go), answered here with the JSON its
//     Caller gives, its large strings set aside in the connection's jsonwire.Store;
//     every other message goes to the SDK.

// serverTransport is the mcp.Transport of a Server's end: Serve's.
type serverTransport struct {
	framing *Transport
	// srv's routes take the relay route; nil: every call goes through the SDK (tests
	// compare the two routes' answers).
	srv *Server
	// maxInflight bounds the bytes of large requests held at once (DefaultMaxInflight
	// when zero).
	maxInflight int64
	// maxUnsent bounds the answers ready but not yet written before the reader takes no
	// new call (DefaultMaxUnsent when zero).
	maxUnsent int
	logger    *slog.Logger // nil: discard
}

// Connect implements mcp.Transport.
func (t *serverTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	f := t.framing.framer()
	budget := t.maxInflight
	if budget <= 0 {
		budget = DefaultMaxInflight
	}
	if budget < int64(f.maxLine) {
		budget = int64(f.maxLine) // one line of the largest size always fits
	}
	logger := t.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	base, stop := context.WithCancel(ctx)
	c := &conn{
		f:        f,
		srv:      t.srv,
		base:     base,
		stop:     stop,
		logger:   logger,
		inbox:    newInbox(),
		calls:    newTracker(budget),
		unsent:   newUnsent(cmp.Or(t.maxUnsent, DefaultMaxUnsent)),
		outgoing: make(map[jsonrpc.ID]bool),
		store:    t.newStore(),
	}
	c.workers = workers{idle: make(chan func()), stop: c.closed}
	c.calls.onWait = func(need, max int64) {
		logger.Info("a large request waits: the requests in flight hold the limit", "request_bytes", need, "limit_bytes", max)
	}
	go c.readLoop()
	return c, nil
}

// newStore is the connection's store of set-aside strings, keeping whole the members
// the server's tools parse.
func (t *serverTransport) newStore() *jsonwire.Store {
	if t.srv == nil {
		return jsonwire.NewStore()
	}
	return jsonwire.NewStore(t.srv.parsed...)
}

// conn is a server's end of one connection.
type conn struct {
	f      *framer
	srv    *Server // nil: no relay route
	logger *slog.Logger
	inbox
	once     sync.Once
	closeErr error
	calls    *tracker
	unsent   *unsent // answers being written
	// store holds the large strings of the calls relayed, by stand-in.
	store *jsonwire.Store
	// workers read on while a goroutine that read a relayed call runs it.
	workers workers

	// outgoing are the ids of our own calls not yet answered nor cancelled: an answer
	// to any other id (the peer answering a call we cancelled) is logged.
	omu      sync.Mutex
	outgoing map[jsonrpc.ID]bool

	base        context.Context // of the relayed calls; ends with the connection
	stop        context.CancelFunc
	initMu      sync.Mutex
	initID      jsonrpc.ID // the initialize request's id
	initialized bool       // its answer has been written
	client      string     // the client's name, from its initialize request
	multiRound  bool       // ... with a protocol version of the stateless era
}

// SessionID implements mcp.Connection (stdio has no session id).
func (c *conn) SessionID() string { return "" }

// Write implements mcp.Connection.
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	switch m := msg.(type) {
	case *jsonrpc.Response:
		c.initMu.Lock()
		if c.initID.IsValid() && m.ID == c.initID && m.Error == nil {
			c.initialized = true
			v, _ := jsonwire.Unquote(jsonwire.Member(m.Result, "protocolVersion"))
			c.multiRound = v >= statelessProtocol
		}
		c.initMu.Unlock()
		send, keys, release := c.calls.finish(m.ID)
		// The end of input waits for this answer: it counts as given once written.
		defer release()
		c.store.Drop(keys)
		if !send {
			return nil // the peer cancelled the request: no answer (MCP, cancellation)
		}
		c.unsent.enter()
		defer c.unsent.leave()
	case *jsonrpc.Request:
		c.omu.Lock()
		switch {
		case m.IsCall():
			c.outgoing[m.ID] = true
		case m.Method == "notifications/cancelled":
			delete(c.outgoing, cancelledID(m.Params))
		}
		c.omu.Unlock()
	}
	select {
	case <-c.closed:
		return fmt.Errorf("writing to a closed connection: %w", io.ErrClosedPipe)
	default:
	}
	return c.f.write(msg)
}

// Close implements mcp.Connection.
func (c *conn) Close() error {
	c.once.Do(func() {
		c.stop()
		close(c.closed)
		c.closeErr = c.f.close()
	})
	return c.closeErr
}

// writeRaw writes a reply the SDK never sees (to a line it was not given).
func (c *conn) writeRaw(line []byte) {
	// A failed write shows up as the SDK's own write error soon after.
	_ = c.f.writeLine(line)
}

// readLoop reads lines and handles them, until the input ends or a relayed call takes
// this goroutine (another one reads on).
func (c *conn) readLoop() {
	for {
		line, tooLong, err := c.f.readLine()
		if tooLong {
			c.writeRaw(rawErrorReply(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: "+c.f.tooLongReason()))
		} else if msg := bytes.TrimSpace(line); len(msg) > 0 {
			if !c.handle(msg, len(line)) {
				return
			}
		}
		if err != nil {
			// The end of input ends the session only once every request read has been
			// answered (the SDK would otherwise drop the calls still running) — unless
			// no one can read the answers any more: the client is gone (killed, or its
			// end closed), and the calls still running end with the connection.
			var gone <-chan struct{}
			if f, ok := c.f.out.(*os.File); ok {
				gone = readerGone(f, c.closed)
			}
			c.calls.waitIdle(c.closed, gone)
			select {
			case <-gone:
				c.logger.Info("the client is gone: the calls still running are cancelled")
			default:
			}
			c.deliver(item{err: err})
			return
		}
	}
}

// handle decodes one line and passes it on; false: this goroutine reads no more (the
// connection ends, or a relayed call took it and another goroutine reads on).
func (c *conn) handle(line []byte, size int) bool {
	small, keys, msg := c.setAside(line)
	if m, ok := small.(*jsonrpc.Request); ok && m.IsCall() {
		if r := c.relayRoute(m); r.rt != nil && c.store.Count(r.args) == len(keys) {
			// A relayed call, each long string set aside in its arguments, all in one
			// pass over the line.
			return c.startRelay(m, size, r, keys)
		}
	}
	c.store.Drop(keys)
	if msg == nil {
		var id []byte
		var code int64
		var reason string
		if msg, id, code, reason = c.f.decode(line); code != 0 {
			c.writeRaw(rawErrorReply(id, code, reason))
			return true
		}
	}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		switch {
		case m.IsCall():
			if m.Method == "initialize" {
				name, _ := jsonwire.Unquote(jsonwire.Member(jsonwire.Member(m.Params, "clientInfo"), "name"))
				c.initMu.Lock()
				c.initID, c.client = m.ID, name
				c.initMu.Unlock()
			}
			// The route of a call: relayed (its large strings set aside: the SDK's
			// handlers get their arguments whole), or the SDK's.
			if r := c.relayRoute(m); r.rt != nil {
				var keys []string
				if len(r.args) >= jsonwire.MinSize {
					r.args, keys = c.store.Offload(r.args)
				}
				return c.startRelay(m, size, r, keys)
			}
			if ok, dup := c.track(m, size, nil); !ok || dup {
				return ok
			}
		case m.Method == "notifications/cancelled":
			c.calls.cancel(cancelledID(m.Params))
		case c.f.announcement(m):
			return true // for the framing alone: the SDK never sees it
		}
	case *jsonrpc.Response:
		c.omu.Lock()
		pending := c.outgoing[m.ID]
		delete(c.outgoing, m.ID)
		c.omu.Unlock()
		if !pending {
			c.logger.Warn("the peer answered a call that is not pending (cancelled, or never made)", "id", m.ID.Raw())
		}
	}
	return c.deliver(item{msg: msg})
}

// track records a call read, with its stand-ins (dropped once it is answered). A call
// whose id is in use is answered with an error here (dup), as the SDK may not know the
// first one; ok false ends the connection.
func (c *conn) track(m *jsonrpc.Request, size int, keys []string) (ok, dup bool) {
	if !c.unsent.wait(c.closed) {
		c.store.Drop(keys)
		return false, false
	}
	ok, dup = c.calls.start(m.ID, size, keys, c.closed)
	switch {
	case dup:
		c.store.Drop(keys)
		// Answered with its id, as JSON-RPC wants of every request whose id was read.
		c.writeRaw(rawErrorReply(appendID(nil, m.ID), jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: request id %v is already in use", m.ID.Raw())))
		return true, true
	case !ok:
		c.store.Drop(keys)
	}
	return ok, false
}

// decodeLine returns the message of a line, or a JSON-RPC error code, the raw id to
// answer with (nil: null) and the reason.
func decodeLine(line []byte) (msg jsonrpc.Message, id []byte, code int64, reason string) {
	env, err := parseEnvelope(line)
	switch {
	case errors.Is(err, jsonwire.ErrNotObject) && line[0] == '[':
		return nil, nil, jsonrpc.CodeInvalidRequest, "Invalid Request: want one JSON-RPC object per line (batches are not supported)"
	case errors.Is(err, jsonwire.ErrNotObject):
		return nil, nil, jsonrpc.CodeInvalidRequest, "Invalid Request: want one JSON-RPC object per line"
	case errors.Is(err, jsonwire.ErrTooDeep):
		// JSON nested deeper than we validate is refused, but the request is still
		// answered with its id when the envelope around the deep value gives one.
		id := deepRequestID(line)
		if id == nil {
			return nil, nil, jsonrpc.CodeParseError, "Parse error: " + err.Error()
		}
		return nil, id, jsonrpc.CodeInvalidRequest, "Invalid Request: " + strings.TrimPrefix(err.Error(), jsonwire.ErrSyntax.Error()+": ")
	case err != nil:
		return nil, nil, jsonrpc.CodeParseError, "Parse error: " + err.Error()
	}
	msg, err = toMessage(env)
	if err == nil {
		return msg, nil, 0, ""
	}
	var idErr *idError
	if errors.As(err, &idErr) {
		switch env.id[0] {
		case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			// The id was made out: echo it exactly as sent (JSON-RPC: the response's id
			// is the request's; null only when it could not be detected).
			return nil, env.id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: id %s cannot be answered exactly: %s; use a string or an integer", clip(env.id), idErr.reason)
		}
		return nil, nil, jsonrpc.CodeInvalidRequest, "Invalid Request: " + idErr.reason
	}
	if env.id != nil && env.method != nil {
		if _, err := parseID(env.id); err == nil {
			id = env.id
		}
	}
	return nil, id, jsonrpc.CodeInvalidRequest, "Invalid Request: " + err.Error()
}

// deepRequestID is the raw id of a request line whose validation stopped at a value
// nested too deep, found by walking its top-level members without validating them; nil
// (a parse error, answered with null) when the line is not one balanced object, is not a
// request, or its id is not one the SDK carries exactly.
func deepRequestID(line []byte) []byte {
	line = jsonwire.TrimSpace(line)
	if jsonwire.ValueEnd(line, 0) != len(line) {
		return nil
	}
	env, ok := walkEnvelope(line)
	if !ok || env.id == nil || env.method == nil {
		return nil
	}
	if _, err := parseID(env.id); err != nil || string(env.id) == "null" {
		return nil
	}
	return env.id
}

func clip(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}

// cancelledID is the typed id a notifications/cancelled names (invalid if none).
func cancelledID(params []byte) jsonrpc.ID {
	raw := jsonwire.Member(params, "requestId")
	if raw == nil {
		return jsonrpc.ID{}
	}
	id, err := parseID(raw)
	if err != nil {
		return jsonrpc.ID{}
	}
	return id
}
