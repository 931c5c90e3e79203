package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/jsonwire"
)

// This file is the relay route of tools/call: a call of one of the server's routes is
// answered by the server's end of the connection (conn.go), once the session is
// initialized, with the JSON its Caller gives, without the SDK's per-request decoding
// and encoding, which was most of a small call's cost at each end. Its large strings are set aside (stand-ins) in one
// pass over the line. Every answer must be the one the SDK would give, byte for byte
// (TestFastPathAnswersAsTheSDK): the shapes it adds for the protocol spoken are in
// shape. Everything else — other methods, calls before initialize, unknown tools — goes
// through the SDK.

// startRelay runs a relayed call. It runs at once, on this goroutine, and the
// reading goes on on a worker: so the call does not wait for a sleeping thread to wake
// and take it (tens of microseconds in a VM, twice a call: here and in the agent), only
// the next message's read does. It returns false, as this goroutine reads no more.
func (c *conn) startRelay(m *jsonrpc.Request, size int, r routed, keys []string) bool {
	ok, dup := c.track(m, size, keys)
	if !ok || dup {
		return ok
	}
	c.workers.run(func() { c.readLoop() })
	c.relayCall(m.ID, r)
	return false
}

// setAside decodes a large line with its long strings set aside, in one pass:
// small is the message so and keys the stand-ins made. A line read from a writer that
// does not validate is validated first, and msg is then its message as it came. All are
// nil when the line is small or not valid.
func (c *conn) setAside(line []byte) (small jsonrpc.Message, keys []string, msg jsonrpc.Message) {
	if len(line) < jsonwire.MinSize || c.srv == nil {
		return nil, nil, nil
	}
	if !c.f.validated {
		env, err := parseEnvelope(line)
		if err != nil {
			return nil, nil, nil // decode finds the error again, and answers it
		}
		if msg, err = toMessage(env); err != nil {
			return nil, nil, nil
		}
	}
	out, keys := c.store.Offload(line)
	if keys == nil {
		return nil, nil, msg
	}
	if env, ok := walkEnvelope(out); ok {
		if small, err := toMessage(env); err == nil {
			return small, keys, msg
		}
	}
	c.store.Drop(keys)
	return nil, nil, msg
}

// resultShape says how the SDK would shape a call's result: after an initialize
// handshake of the stateless era it marks the result complete; a stateless call's
// result also names the server in _meta.
type resultShape struct{ complete, serverInfo bool }

// routed is a relayed tools/call: its route, raw arguments and raw
// progress token (nil: none), how to shape its result, and who made it.
type routed struct {
	rt        *route
	args, tok []byte
	kind      resultShape
	client    string // the client's name (initialize)
	id        string // the client's id for the call (CallIDMeta), if it gave one
}

// relayRoute returns the call if it takes the relay route: one of the server's
// routes, once initialize was answered or in a call of the stateless protocol; its rt
// is nil otherwise.
func (c *conn) relayRoute(m *jsonrpc.Request) routed {
	none := func() routed { return routed{} }
	if c.srv == nil || m.Method != "tools/call" {
		return none()
	}
	c.initMu.Lock()
	ready, multiRound, client := c.initialized, c.multiRound, c.client
	c.initMu.Unlock()
	// One walk over the params finds all three (the arguments may be megabytes).
	var meta, rawName, args []byte
	jsonwire.Members(m.Params, func(key, val []byte) {
		switch string(key) {
		case "_meta":
			meta = val
		case "name":
			rawName = val
		case "arguments":
			args = val
		}
	})
	kind := resultShape{complete: multiRound}
	if statelessCall(meta) {
		kind = resultShape{complete: true, serverInfo: true}
	} else if !ready {
		return none()
	}
	name, ok := jsonwire.Unquote(rawName)
	if !ok {
		return none()
	}
	rt := c.srv.routes[name]
	if rt == nil {
		return none() // the SDK's "unknown tool" error
	}
	r := routed{rt: rt, args: args, kind: kind, client: client}
	if meta != nil {
		r.tok = jsonwire.Member(meta, "progressToken")
		if r.tok != nil && r.tok[0] != '"' && (r.tok[0] < '0' || r.tok[0] > '9') && r.tok[0] != '-' {
			r.tok = nil // not a string or number: no progress, as the SDK
		}
		r.id, _ = jsonwire.Unquote(jsonwire.Member(meta, CallIDMeta))
		if kind.serverInfo {
			// A stateless call names its client itself.
			r.client, _ = jsonwire.Unquote(jsonwire.Member(jsonwire.Member(meta, mcp.MetaKeyClientInfo), "name"))
		}
	}
	return r
}

// statelessProtocol is the MCP version whose requests carry the client's state in _meta
// instead of an initialize handshake (the Go SDK's client speaks it).
const statelessProtocol = "2026-07-28"

// statelessCall reports whether a request's _meta makes it a complete call of the
// stateless protocol, as the SDK requires: its version, and the client's capabilities.
func statelessCall(meta []byte) bool {
	if meta == nil {
		return false
	}
	v, ok := jsonwire.Unquote(jsonwire.Member(meta, "io.modelcontextprotocol/protocolVersion"))
	caps := jsonwire.Member(meta, "io.modelcontextprotocol/clientCapabilities")
	return ok && v == statelessProtocol && len(caps) > 0 && caps[0] == '{'
}

// relayCall runs one tools/call and writes its answer (or drops it if cancelled), as the
// SDK would: a *jsonrpc.Error as an error response, a result with content [] at least.
func (c *conn) relayCall(id jsonrpc.ID, r routed) {
	ctx, cancel := context.WithCancel(c.base)
	defer cancel()
	if !c.calls.setAbort(id, cancel) {
		cancel()
	}
	call := Call{Args: r.args, StandIns: c.store, Client: r.client, ID: r.id}
	if call.ID == "" {
		call.ID = fmt.Sprint(id.Raw())
	}
	if tok := r.tok; tok != nil {
		call.Progress = func(msg string, total float64) { c.notifyProgress(tok, msg, total) }
	}
	resp := &jsonrpc.Response{ID: id}
	res, err := r.rt.callRaw(ctx, call)
	if err == nil {
		resp.Result, err = c.shape(res, r.kind)
	}
	if err != nil {
		resp.Error = err
	}
	// A failed write shows up in the SDK's own next write.
	_ = c.Write(c.base, resp)
}

// shape gives a call's result JSON what the SDK adds for the protocol spoken: a
// stateless call's result names the server in _meta (merged, in the key order the SDK's
// map encoding gives, into the _meta Local writes, whose only key sorts after it); after
// an initialize handshake of the stateless era the result is marked complete (the SDK's
// unexported resultType, last as it writes it).
func (c *conn) shape(res []byte, kind resultShape) ([]byte, error) {
	if len(res) < 2 || res[0] != '{' || res[len(res)-1] != '}' {
		return nil, fmt.Errorf("%w: not a JSON object", ErrInvalidResult)
	}
	if kind.serverInfo {
		impl, err := json.Marshal(c.srv.impl)
		if err != nil {
			return nil, err
		}
		const metaStart = `{"_meta":{`
		out := make([]byte, 0, len(res)+len(impl)+96)
		if bytes.HasPrefix(res, []byte(metaStart)) {
			out = append(out, metaStart+`"io.modelcontextprotocol/serverInfo":`...)
			out = append(append(out, impl...), ',')
			res = append(out, res[len(metaStart):]...)
		} else {
			out = append(out, `{"_meta":{"io.modelcontextprotocol/serverInfo":`...)
			out = append(append(out, impl...), '}', ',')
			res = append(out, res[1:]...)
		}
	}
	if kind.complete {
		res = append(res[:len(res)-1:len(res)-1], `,"resultType":"complete"}`...)
	}
	return res, nil
}

// notifyProgress writes a notifications/progress for a relayed call; the token is
// echoed as the client wrote it.
func (c *conn) notifyProgress(tok []byte, msg string, total float64) {
	line := append(make([]byte, 0, len(msg)+128), `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`...)
	line = append(line, tok...)
	line = append(line, `,"progress":`...)
	line = strconv.AppendFloat(line, total, 'f', -1, 64)
	if msg != "" {
		line = append(line, `,"message":`...)
		line = jsonwire.AppendString(line, msg)
	}
	line = append(line, '}', '}', '\n')
	c.writeRaw(line)
}

// callRaw runs a relayed call and returns its result's JSON, as
// its Caller gave it.
func (r *route) callRaw(ctx context.Context, c Call) (json.RawMessage, error) {
	c, err := r.prepare(c)
	if err != nil {
		return nil, err
	}
	raw, err := r.caller.CallTool(ctx, c)
	if err != nil {
		res, err := r.failure(ctx, err)
		if err != nil {
			return nil, err
		}
		return json.Marshal(res)
	}
	if r.contentOnly {
		return withoutStructured(raw)
	}
	return raw, nil
}
