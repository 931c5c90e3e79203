package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/pi-sbx/pi-sbx-backend/agent"
	"github.com/pi-sbx/pi-sbx-backend/backend"
	"github.com/pi-sbx/pi-sbx-backend/tools"
)

// runServe: pi-sbx-backend serve [--workspace DIR] [--cwd DIR] [--transport
// persistent|per-call] [--log-level LEVEL]. An MCP server on stdio whose seven tools run
// in the session's sandbox; stdout carries the protocol only, everything else goes to
// stderr.
func runServe(ctx context.Context, std stdio, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(std.err)
	workspace, cwd := workspaceFlags(fs, "working directory of tool calls")
	transport := fs.String("transport", "persistent", "how calls reach the sandbox: persistent (one agent channel) or per-call")
	logLevel := logLevelFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	logger, err := newLogger(std.err, *logLevel)
	if err != nil {
		return err
	}
	session, err := newSandboxSession(std, *workspace, *cwd)
	if err != nil {
		return err
	}
	target := agent.Target{
		Sbx:       session.client,
		Sandbox:   session.Ensure,
		Installer: &agent.Installer{Sbx: session.client, Version: version},
		Env:       session.vmEnv,
		Cwd:       session.cwd,
	}
	var caller backend.Caller
	closeCaller := func() error { return nil }
	switch *transport {
	case "persistent":
		ch := &agent.Channel{Target: target, Version: version, Logger: logger, Stderr: std.err}
		caller, closeCaller = ch, ch.Close
	case "per-call":
		caller = &agent.PerCall{Target: target}
	default:
		return usagef("--transport %q: want persistent or per-call", *transport)
	}
	logger.Info("serving", "workspace", session.workspace, "cwd", session.cwd, "sandbox", session.Name, "transport", *transport)
	srv := backend.NewServer(tools.Default(), caller, backend.Options{Name: "pi-sbx-backend", Version: version, Logger: logger})
	serveErr := backend.Serve(ctx, srv, std.in, std.out)

	// Orderly shutdown: stop the agent, then tear down a sandbox this session created.
	if err := closeCaller(); err != nil {
		logger.Debug("closing the agent channel", "error", err)
	}
	if err := session.teardown(ctx); err != nil {
		logger.Error("teardown", "error", err)
	}
	if serveErr == nil || errors.Is(serveErr, context.Canceled) || errors.Is(serveErr, io.EOF) {
		return nil
	}
	return fmt.Errorf("serving MCP on stdio: %w", serveErr)
}

// logLevelFlag defines the --log-level flag of the long-running commands.
func logLevelFlag(fs *flag.FlagSet) *string {
	return fs.String("log-level", "warn", "stderr log level: debug, info, warn or error")
}

// parseFlags parses a command's flags and rejects positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return usagef("%v", err)
	}
	if fs.NArg() != 0 {
		return usagef("unexpected arguments %q", fs.Args())
	}
	return nil
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("--log-level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// absDir returns dir (default: the current directory) as a clean absolute path.
func absDir(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("finding the current directory: %w", err)
		}
		return wd, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", dir, err)
	}
	return abs, nil
}
