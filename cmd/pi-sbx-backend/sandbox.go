package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/session"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/settings"
)

// dirOptions are the --workspace and --cwd flags of the sandbox commands, and --cloud
// of those that make a sandbox (serve, shell).
type dirOptions struct {
	workspace, cwd string
	cloud          bool
}

// defineCloud adds --cloud: the same as PI_SBX_CLOUD=1.
func (d *dirOptions) defineCloud(fs *flag.FlagSet) {
	fs.BoolVar(&d.cloud, "cloud", false, "the session's sandbox in Docker's cloud (sbx --cloud; review mode, the workspace shipped in): the same as PI_SBX_CLOUD=1")
}

func (d *dirOptions) define(fs *flag.FlagSet, cwdUsage string) {
	fs.StringVar(&d.workspace, "workspace", "", "primary workspace of the sandbox: an existing `DIR` (default: the current directory)")
	fs.StringVar(&d.cwd, "cwd", "", cwdUsage+" (default: the workspace)")
}

// sandboxEnv documents the variables of the commands that reach a sandbox.
var sandboxEnv = []envDoc{
	{"DOCKER_SANDBOX=NAME", "use this sandbox (created if missing); never removed"},
	{"DOCKER_SANDBOX_REUSE=1", "without DOCKER_SANDBOX: the project's sandbox pi-sbx-<basename>-<hash>, kept between sessions"},
	{"DOCKER_SANDBOX_TEARDOWN", "remove|stop|none: a session sandbox's fate at exit (default remove)"},
	{"DOCKER_SANDBOX_WORKSPACE_MODE", "rw|ro|review: the workspace read/write (default), read-only (scratch primary ~/.sbx-prime-NAME), or the sandbox's own copy until landed (git: sbx create --clone; other: a copy-on-write layer)"},
	{"DOCKER_SANDBOX_WORKSPACE_RO=1", "the same as DOCKER_SANDBOX_WORKSPACE_MODE=ro"},
	{"DOCKER_SANDBOX_TEARDOWN_FORCE=1", "teardown removes a review sandbox even with unlanded work (fetched to the host first)"},
	{"DOCKER_SANDBOX_ENV_ALLOWLIST=A,B", "host variables kept for sbx and forwarded into the VM"},
	{"DOCKER_SANDBOX_ENV_PASSTHROUGH=1", "keep every variable but DOCKER_*/COMPOSE_* (host-describing ones stay out of the VM)"},
	{"PI_SBX_BIN", "the sbx program (default: sbx on PATH, then the usual install places)"},
	{"PI_SBX_CLOUD=1", "the session's sandbox in Docker's cloud (review mode, the workspace shipped in; docs/cloud.md)"},
	{"PI_SBX_CLOUD_SIZE", "micro|small|medium|large|xl: a cloud sandbox's size (default sbx's)"},
	{"PI_SBX_CLOUD_SHIP=a,b/c", "workspace paths shipped to a cloud sandbox although ignored or left out by default"},
	{"PI_*", "forwarded into the VM (pi's session variables)"},
}

// sessionRole is what a command holds its session as: its name (serve, shell), whether
// the sandbox is kept awake between calls, and the quick checks run as it starts.
type sessionRole struct {
	name      string
	keepAlive bool
	preflight func(ctx context.Context, c *sbx.Client) func(context.Context) error
}

// hostSettings reads this process's settings (its environment), once per command; a bad
// one is a usage error.
func hostSettings(extra ...string) (settings.Settings, error) {
	st, err := settings.Parse(append(os.Environ(), extra...))
	var se *settings.Error
	if errors.As(err, &se) {
		return st, usageError{se.Msg}
	}
	return st, err
}

// openSession checks the --workspace and --cwd flags (the workspace must be an existing
// directory: sbx would otherwise fail later, at the first call) and opens the session
// from this process's settings.
func openSession(ctx context.Context, std stdio, d dirOptions, role sessionRole) (*session.Session, error) {
	var extra []string
	if d.cloud {
		extra = append(extra, "PI_SBX_CLOUD=1") // read, and checked, as the variable is
	}
	st, err := hostSettings(extra...)
	if err != nil {
		return nil, err
	}
	ws, err := absDir(d.workspace)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(ws); err != nil {
		return nil, usagef("--workspace %s: %v", ws, errors.Unwrap(err))
	} else if !fi.IsDir() {
		return nil, usagef("--workspace %s: not a directory", ws)
	}
	cwd := ""
	if d.cwd != "" {
		if cwd, err = absDir(d.cwd); err != nil {
			return nil, err
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this executable: %w", err)
	}
	return session.Open(session.Options{
		Settings: st, Pid: os.Getpid(), Workspace: ws, Cwd: cwd, Exe: exe,
		Progress: std.err, Runner: sbx.ExecRunner{},
		Role: role.name, KeepAlive: role.keepAlive, Preflight: role.preflight, Context: ctx,
	})
}
