package mcpserver

import (
	"context"
	"io"
	"os"
)

// Serve runs srv over newline-delimited JSON on in/out until in ends (and every request
// read has been answered) or ctx is done. Unlike the SDK's stdio transport, which ends
// the session at the first undecodable line, it answers garbage, oversized lines,
// batches and ids it cannot echo exactly with JSON-RPC errors and keeps serving (see
// Transport), and answers tools/call of srv's routes itself.
func Serve(ctx context.Context, srv *Server, in io.Reader, out io.Writer) error {
	// A client that gives serve pipes (not sockets, as Node does) sends a large write in
	// far fewer wake-ups with a larger pipe buffer.
	for _, f := range []any{in, out} {
		if f, ok := f.(*os.File); ok {
			GrowPipe(f)
		}
	}
	return srv.Run(ctx, &Transport{In: in, Out: out, Guard: true, Validated: srv.validated, Logger: srv.logger, server: srv})
}
