package backend

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxRequestLine bounds one inbound JSON-RPC message (a line); longer lines are answered
// with an error and skipped without being held in memory.
const MaxRequestLine = 32 << 20

// Serve runs srv over newline-delimited JSON on in/out until in ends (and every request
// read has been answered) or ctx is done. Unlike the SDK's stdio transport, which ends
// the session at the first undecodable line, it answers garbage, oversized lines and
// batches with JSON-RPC errors and keeps serving.
func Serve(ctx context.Context, srv *mcp.Server, in io.Reader, out io.Writer) error {
	calls := newInflight()
	w := &lineWriter{w: out, calls: calls}
	g := &guard{ctx: ctx, r: bufio.NewReaderSize(in, 64<<10), w: w, max: MaxRequestLine, calls: calls}
	return srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(g), Writer: w, MaxLineLength: -1})
}

// lineWriter serialises whole-message writes: the SDK writes each message with one
// Write call, and the guard writes its error replies through the same lock.
type lineWriter struct {
	mu    sync.Mutex
	w     io.Writer
	calls *inflight
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	n, err := l.w.Write(p)
	l.mu.Unlock()
	if l.calls != nil {
		l.calls.response(p)
	}
	return n, err
}

func (l *lineWriter) Close() error { return nil }

// guard yields only lines that decode as one JSON-RPC message.
type guard struct {
	ctx     context.Context
	calls   *inflight
	r       *bufio.Reader
	w       io.Writer
	max     int
	pending []byte
	err     error
}

func (g *guard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		if g.err != nil {
			// The end of input ends the session only once every request read has been
			// answered; the SDK would otherwise drop the calls still running.
			g.calls.wait(g.ctx)
			return 0, g.err
		}
		line, tooLong, err := g.readLine()
		g.err = err
		switch msg := bytes.TrimSpace(line); {
		case tooLong:
			g.reject(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: message longer than %d bytes", g.max))
		case len(msg) == 0:
		default:
			if id, code, reason := check(msg); code != 0 {
				g.reject(id, code, reason)
				continue
			}
			g.calls.request(msg)
			g.pending = append(msg, '\n')
		}
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// readLine reads one line, keeping at most max bytes of it; a longer line is consumed to
// its end and reported as tooLong.
func (g *guard) readLine() (line []byte, tooLong bool, err error) {
	for {
		chunk, err := g.r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > g.max+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, tooLong, err
	}
}

// check returns a JSON-RPC error code (0 if fine) for a candidate message, and the
// request id to answer with when one can be made out.
func check(msg []byte) (id any, code int, reason string) {
	if !json.Valid(msg) {
		return nil, jsonrpc.CodeParseError, "Parse error: not valid JSON"
	}
	if msg[0] != '{' {
		return nil, jsonrpc.CodeInvalidRequest, "Invalid Request: want one JSON-RPC object per line (batches are not supported)"
	}
	if _, err := jsonrpc.DecodeMessage(msg); err != nil {
		var probe struct {
			ID any `json:"id"`
		}
		_ = json.Unmarshal(msg, &probe)
		switch probe.ID.(type) {
		case string, float64:
			id = probe.ID
		}
		return id, jsonrpc.CodeInvalidRequest, "Invalid Request: " + err.Error()
	}
	return nil, 0, ""
}

func (g *guard) reject(id any, code int, message string) {
	reply, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error":   map[string]any{"code": code, "message": message},
	})
	if err != nil {
		return
	}
	// A failed write shows up as the SDK's own write error soon after.
	_, _ = g.w.Write(append(reply, '\n'))
}
