package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/agentlink"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/audit"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/doctor"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/lifecycle"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/netpolicy"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/journal/recorder"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/session"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/settings"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// serveOptions are serve's flags.
type serveOptions struct {
	dirs      dirOptions
	transport string
	logLevel  string
	tools     string
	details   string
}

func serveCommand() command {
	var o serveOptions
	return command{
		name:     "serve",
		synopsis: "[--workspace DIR] [--cwd DIR] [--cloud] [--transport persistent|per-call] [--tools +terminal] [--details none|structured] [--log-level LEVEL]",
		summary:  "MCP server on stdio; every tool call runs in the session's sandbox",
		help: `An MCP server on stdio (stdout carries the protocol only; logs and sandbox-creation
progress go to stderr). Its tools are pi's seven (bash read write edit grep find ls), which
run in the VM, and the docker_* tools (a private Docker daemon in the sandbox: build, run,
publish ports on host 127.0.0.1, compose, docker_curl, the docker_verify audit, GC), which
run here and reach docker only through sbx exec. The
first call creates the session's sandbox pi-sbx-<pid>-<random> with the workspace mounted
at its host path, installs the agent in the VM and runs every call there. When serve ends
(stdin closed, SIGTERM), a sandbox it created is removed; after kill -9, a watchdog
removes it. A sandbox another session still uses (a shell, an editor's serve joined by
DOCKER_SANDBOX) is left to them and removed once the last is gone. Nothing ever runs
on the host when the sandbox fails.`,
		env: append(append(append([]envDoc{}, sandboxEnv...), deployEnv...),
			envDoc{"PI_SBX_TOOLS", "+terminal: offer the terminal tools too (what --tools gives, which wins)"},
			envDoc{"PI_SBX_DETAILS", "none|structured: what --details gives (the flag wins)"}),
		flags: func(fs *flag.FlagSet) {
			o.dirs.define(fs, "working `DIR` of tool calls")
			o.dirs.defineCloud(fs)
			fs.StringVar(&o.transport, "transport", "persistent", "`MODE` of reaching the sandbox: persistent (one agent channel) or per-call")
			logLevelFlag(fs, &o.logLevel)
			fs.StringVar(&o.details, "details", "", "`MODE` of pi's details in results: none (content, _meta and isError only; the default, right for Claude Code, Codex and other clients, which show the model structuredContent instead of content) or structured (pi's details as structuredContent too, for a client that reads them, as the pi package does); default PI_SBX_DETAILS")
			fs.StringVar(&o.tools, "tools", "", "`+SET`s of tools to offer besides pi's seven and docker_*: +terminal (exec_command, write_stdin, read_output, kill_session, list_sessions); default PI_SBX_TOOLS")
		},
		run: func(ctx context.Context, std stdio, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			if o.transport != "persistent" && o.transport != "per-call" {
				return usagef("--transport %q: want persistent or per-call", o.transport)
			}
			if _, err := contentOnly(o.details, ""); err != nil {
				return err
			}
			if _, err := parseExtraTools(o.tools, false); err != nil {
				return err
			}
			return runServe(ctx, std, o)
		},
	}
}

// runServe runs the MCP server whose seven tools run in the session's sandbox.
func runServe(ctx context.Context, std stdio, o serveOptions) error {
	logLevel, transport := &o.logLevel, &o.transport
	logger, err := newLogger(std.err, *logLevel)
	if err != nil {
		return err
	}
	// A client that closes serve's stdout ends the session, with its teardown: a write
	// there must fail (EPIPE), not kill serve (Go's default for descriptors 1 and 2).
	signal.Ignore(syscall.SIGPIPE)
	// sbx's auto-stop must not end the session's sandbox between calls: keep it awake.
	sess, err := openSession(ctx, std, o.dirs, sessionRole{name: "serve", keepAlive: true, preflight: doctor.StartPreflight})
	if err != nil {
		return err
	}
	st := sess.Settings
	target := agentlink.Target{
		Sbx:       sess.Client,
		Sandbox:   sess.Ensure,
		Lost:      sess.Lost,
		Installer: &agentlink.Installer{Sbx: sess.Client, Version: version},
		Env:       sess.VMEnv,
		Cwd:       sess.Cwd,
	}
	var caller mcpserver.Caller
	var splicing *agentlink.Channel // its routes take stand-ins (mcpserver.Route.StandIns)
	closeCaller := func() error { return nil }
	switch *transport {
	case "persistent":
		ch := &agentlink.Channel{Target: target, Version: version, Logger: logger, Stderr: std.err}
		caller, splicing, closeCaller = ch, ch, ch.Close
	case "per-call":
		caller = &agentlink.PerCall{Target: target}
	default:
		return usagef("--transport %q: want persistent or per-call", *transport)
	}
	logger.Info("serving", "workspace", sess.Workspace, "cwd", sess.Cwd, "sandbox", sess.Name, "transport", *transport)
	// pi's seven run in the VM, through the agent.
	var routes []mcpserver.Route
	if st.ToolMode != settings.DeployOnly {
		routes = mcpserver.Routes(tools.Pi(), caller)
	}
	routes = append(routes, session.Methods(sess, caller)...) // unlisted: ! commands, status
	x, err := parseExtraTools(o.tools, st.Terminal)
	if err != nil {
		return err
	}
	routes = append(routes, x.routes(caller)...)
	routes = takingStandIns(routes, splicing)
	routes = append(routes, session.ReviewRoute(sessionWork(openKeptWork, st, sess.Workspace, sess.Name), st.Environ))
	// In review mode, the journal: a checkpoint of the workspace after every call that can
	// change it (pi-sbx-backend review --calls, undo; serve's pi_sbx_calls, pi_sbx_undo).
	var rec *recorder.Recorder
	if st.Mode == lifecycle.ModeReview {
		if rec, err = journalRecorder(st, sess.Workspace, sess.Name, caller); err != nil {
			logger.Warn("no journal", "error", err)
			rec = nil
		} else {
			rec.Cwd = sess.Cwd
		}
	}
	routes = append(routes, session.JournalRoutes(rec, sessionWork(openKeptWork, st, sess.Workspace, sess.Name), sess.Name, st.Environ)...)
	// The docker_* tools run here, on the host, and reach docker only through sbx exec.
	dep, err := sess.Deployer(false)
	if err != nil {
		return err
	}
	if st.ToolMode != settings.ToolsOnly {
		routes = append(routes, dep.Routes()...)
	}
	// A command whose connections sbx's proxy denied gets one line naming them and why.
	explainer := &netpolicy.Explainer{Log: sess.Client.PolicyLog, Sandbox: func() string { return sess.Name }}
	routes = explainer.Routes(routes)
	bare, err := contentOnly(o.details, st.Details)
	if err != nil {
		return err
	}
	if bare {
		routes = mcpserver.ContentOnly(routes)
	}
	// Every call, from every client, in the sandbox's audit log (pi-sbx-backend log);
	// a log that cannot be written is said on stderr and never fails a call.
	if store, err := audit.NewStore(st.StateHome); err != nil {
		logger.Warn("no audit log", "error", err)
	} else if alog, err := store.Open(sess.Name); err != nil {
		logger.Warn("no audit log", "error", err)
	} else {
		routes = alog.Routes(routes, func(err error) { logger.Warn("audit log", "error", err) })
	}
	// The changing tools' calls are checkpoints; one that fails is said on stderr.
	if rec != nil {
		routes = rec.Routes(routes, func(err error) { logger.Warn("journal", "error", err) })
	}
	dep.StartupGC(ctx, logger, st.GCHours)
	srv, err := mcpserver.NewServer(routes, mcpserver.Options{Name: "pi-sbx-backend", Version: version, Logger: logger})
	if err != nil {
		return err
	}
	serveErr := mcpserver.Serve(ctx, srv, std.in, std.out)

	// Orderly shutdown: stop the agent, then tear down a sandbox this session created.
	if err := closeCaller(); err != nil {
		logger.Debug("closing the agent channel", "error", err)
	}
	if err := sess.End(ctx); err != nil {
		logger.Error("teardown", "error", err)
	}
	if serveErr == nil || errors.Is(serveErr, context.Canceled) || errors.Is(serveErr, io.EOF) {
		return nil
	}
	return fmt.Errorf("serving MCP on stdio: %w", serveErr)
}

// logLevelFlag defines the --log-level flag of the long-running commands.
func logLevelFlag(fs *flag.FlagSet, level *string) {
	fs.StringVar(level, "log-level", "warn", "stderr log `level`: debug, info, warn or error")
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

// takingStandIns marks the routes whose caller is splicing (the agent channel, which
// splices the strings the relay route set aside back in as it writes the request) as
// taking stand-ins; nil marks none. Callers are compared before anything wraps them.
func takingStandIns(routes []mcpserver.Route, splicing *agentlink.Channel) []mcpserver.Route {
	for i := range routes {
		// An interface holding a *Channel compares by pointer (and a caller of another
		// type is never equal, whether or not its type is comparable).
		routes[i].StandIns = splicing != nil && routes[i].Caller == mcpserver.Caller(splicing)
	}
	return routes
}
