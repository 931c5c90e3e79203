package main

import (
	"context"
	"errors"
	"flag"
	goio "io"
	"log/slog"

	"github.com/pi-sbx/pi-sbx-backend/backend"
	"github.com/pi-sbx/pi-sbx-backend/tools"
)

// runAgent: pi-sbx-backend agent [--cwd DIR] [--log-level LEVEL]. The MCP server with the
// seven tools that serve starts inside the VM (`sbx exec -i SANDBOX -- AGENT agent`); it
// runs them here, next to the files, and ends when its stdin does.
func runAgent(ctx context.Context, io stdio, args []string) error {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(io.err)
	cwd := fs.String("cwd", "", "working directory of tool calls (default: the current directory)")
	logLevel := fs.String("log-level", "warn", "stderr log level: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return usagef("%v", err)
	}
	if fs.NArg() != 0 {
		return usagef("unexpected arguments %q", fs.Args())
	}
	logger, err := newLogger(io.err, *logLevel)
	if err != nil {
		return err
	}
	dir, err := absDir(*cwd)
	if err != nil {
		return err
	}
	srv := backend.NewServer(tools.Default(), &backend.Local{Registry: tools.Default(), Cwd: dir},
		backend.Options{Name: "pi-sbx-backend-agent", Version: version, Logger: logger})
	err = backend.Serve(ctx, srv, io.in, io.out)
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, goio.EOF) {
		return nil
	}
	slog.Debug("agent ended", "error", err)
	return err
}
