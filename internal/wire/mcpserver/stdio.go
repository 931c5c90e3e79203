package mcpserver

import (
	"context"
	"io"
	"os"
)

// Serve runs srv over newline-delimited JSON on in/out until in ends (and every request
// read has been answered) or ctx is done. Unlike the SDK's stdio transport, which ends
// the session at the first undecodable line, it answers garbage, oversized lines,
// batches and ids it cannot echo exactly with JSON-RPC errors and keeps serving, and
// relays tools/call of srv's routes to their callers (conn.go).
func Serve(ctx context.Context, srv *Server, in io.Reader, out io.Writer) error {
	// A client that gives serve pipes (not sockets, as Node does) sends a large write in
	// far fewer wake-ups with a larger pipe buffer.
	for _, f := range []any{in, out} {
		if f, ok := f.(*os.File); ok {
			GrowPipe(f)
		}
	}
	return srv.Run(ctx, srv.transport(&Transport{In: in, Out: out, Validated: srv.validated}))
}

// transport is srv's end of a connection framed by framing.
func (s *Server) transport(framing *Transport) *serverTransport {
	return &serverTransport{framing: framing, srv: s, logger: s.logger}
}
