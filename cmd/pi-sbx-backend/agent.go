//go:build linux

package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/vmagent"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
)

func agentCommand() command {
	var cwd, logLevel string
	return command{
		name:     "agent",
		synopsis: "[--cwd DIR] [--log-level LEVEL]",
		summary:  "MCP server with the seven tools, run inside the sandbox by serve",
		internal: true,
		help: `The MCP server on stdio that serve starts inside the VM (sbx exec -i SANDBOX --
AGENT agent). It runs the seven tools there, next to the files, and ends when its stdin
does. Its input is serve's, which has checked every line as JSON: the agent reads lines
without checking them again (a line that is not a message still gets its JSON-RPC
error).`,
		env: []envDoc{{"PI_*", "pi's session variables, given to bash commands"}},
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&cwd, "cwd", "", "working `DIR` of tool calls (default: the current directory)")
			logLevelFlag(fs, &logLevel)
		},
		run: func(ctx context.Context, std stdio, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			// The protocol moves off descriptors 0-2, which tools could open by path.
			in, out, errw, err := vmagent.OwnStdio()
			if err != nil {
				return err
			}
			return runAgent(ctx, stdio{in, out, errw}, cwd, logLevel)
		},
	}
}

// runAgent serves the seven tools on stdio, running them in this machine (the VM).
func runAgent(ctx context.Context, std stdio, cwd, logLevel string) error {
	logger, err := newLogger(std.err, logLevel)
	if err != nil {
		return err
	}
	dir, err := absDir(cwd)
	if err != nil {
		return err
	}
	reg := vmagent.Default() // one registry: its per-file mutation queue must see every call
	caller := &mcpserver.Local{Registry: reg, Cwd: dir, Vars: piVars(os.Environ())}
	var routes []mcpserver.Route
	for _, im := range reg.Impls() {
		routes = append(routes, mcpserver.Route{Tool: im.Tool, Caller: caller, Unlisted: im.Unlisted, StandIns: true})
	}
	// Its input is serve's, which validated every line it forwards.
	srv, err := mcpserver.NewServer(routes, mcpserver.Options{Name: "pi-sbx-backend-agent", Version: version, Logger: logger, ValidatedInput: true})
	if err != nil {
		return err
	}
	err = mcpserver.Serve(ctx, srv, std.in, std.out)
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	slog.Debug("agent ended", "error", err)
	return err
}
