package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"

	"github.com/pi-sbx/pi-sbx-backend/backend"
	"github.com/pi-sbx/pi-sbx-backend/tools"
)

// runAgent: pi-sbx-backend agent [--cwd DIR] [--log-level LEVEL]. The MCP server with the
// seven tools that serve starts inside the VM (`sbx exec -i SANDBOX -- AGENT agent`); it
// runs them here, next to the files, and ends when its stdin does.
func runAgent(ctx context.Context, std stdio, args []string) error {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(std.err)
	cwd := fs.String("cwd", "", "working directory of tool calls (default: the current directory)")
	logLevel := logLevelFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	logger, err := newLogger(std.err, *logLevel)
	if err != nil {
		return err
	}
	dir, err := absDir(*cwd)
	if err != nil {
		return err
	}
	reg := tools.Default() // one registry: its per-file mutation queue must see every call
	srv := backend.NewServer(reg, &backend.Local{Registry: reg, Cwd: dir, Vars: piVars(os.Environ())},
		backend.Options{Name: "pi-sbx-backend-agent", Version: version, Logger: logger})
	err = backend.Serve(ctx, srv, std.in, std.out)
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	slog.Debug("agent ended", "error", err)
	return err
}
