package backend

import (
	"context"
	"io"

	"github.com/pi-sbx/pi-sbx-backend/bigarg"
)

// Serve runs srv over newline-delimited JSON on in/out until in ends (and every request
// read has been answered) or ctx is done. Unlike the SDK's stdio transport, which ends
// the session at the first undecodable line, it answers garbage, oversized lines,
// batches and ids it cannot echo exactly with JSON-RPC errors and keeps serving (see
// Transport). The large strings of tool arguments bypass the SDK's decoding (see
// package bigarg): the calls' contexts carry the connection's store.
func Serve(ctx context.Context, srv *Server, in io.Reader, out io.Writer) error {
	store := bigarg.NewStore()
	return srv.Run(bigarg.WithStore(ctx, store), &Transport{In: in, Out: out, Guard: true, Store: store, Logger: srv.logger, server: srv})
}
