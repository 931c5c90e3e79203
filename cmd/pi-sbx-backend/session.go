package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/sbx"
)

// sandboxSession is what serve and shell share: the session's sandbox (created on first
// need), the sbx client that reaches it, the working directory in it and the variables
// forwarded into it.
type sandboxSession struct {
	client *sbx.Client
	*sbx.Session
	workspace string   // primary workspace, absolute
	cwd       string   // working directory in the VM: the workspace or --cwd, at its host path
	vmEnv     []string // KEY=VALUE forwarded as -e (PI_*, the allowlist)
	reuse     bool     // DOCKER_SANDBOX_REUSE: the project's sandbox, kept
	environ   []string // the environment the session's settings were read from
}

// dirOptions are the --workspace and --cwd flags of the sandbox commands.
type dirOptions struct{ workspace, cwd string }

func (d *dirOptions) define(fs *flag.FlagSet, cwdUsage string) {
	fs.StringVar(&d.workspace, "workspace", "", "primary workspace of the sandbox: an existing `DIR` (default: the current directory)")
	fs.StringVar(&d.cwd, "cwd", "", cwdUsage+" (default: the workspace)")
}

// sandboxEnv documents the variables of the commands that reach a sandbox.
var sandboxEnv = []envDoc{
	{"DOCKER_SANDBOX=NAME", "use this sandbox (created if missing); never removed"},
	{"DOCKER_SANDBOX_REUSE=1", "without DOCKER_SANDBOX: the project's sandbox pi-sbx-<basename>-<hash>, kept between sessions"},
	{"DOCKER_SANDBOX_TEARDOWN", "remove|stop|none: a session sandbox's fate at exit (default remove)"},
	{"DOCKER_SANDBOX_WORKSPACE_RO=1", "mount the workspace read-only (scratch primary ~/.sbx-prime-NAME)"},
	{"DOCKER_SANDBOX_ENV_ALLOWLIST=A,B", "host variables kept for sbx and forwarded into the VM"},
	{"DOCKER_SANDBOX_ENV_PASSTHROUGH=1", "keep every variable but DOCKER_*/COMPOSE_* (host-describing ones stay out of the VM)"},
	{"PI_SBX_BIN", "the sbx program (default: sbx on PATH)"},
	{"PI_*", "forwarded into the VM (pi's session variables)"},
}

// newSandboxSession resolves the directories and reads the session's settings
// (DOCKER_SANDBOX*, the env policy) from this process's environment. The workspace must
// be an existing directory: sbx would otherwise fail later, at the first call.
func newSandboxSession(std stdio, d dirOptions) (*sandboxSession, error) {
	ws, err := absDir(d.workspace)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(ws); err != nil {
		return nil, usagef("--workspace %s: %v", ws, errors.Unwrap(err))
	} else if !fi.IsDir() {
		return nil, usagef("--workspace %s: not a directory", ws)
	}
	dir := ws
	if d.cwd != "" {
		if dir, err = absDir(d.cwd); err != nil {
			return nil, err
		}
	}
	environ, reuse := reuseEnv(os.Environ(), ws)
	client := sbx.NewClient(environ, sbx.ExecRunner{})
	session, err := sbx.NewSession(client, environ, os.Getpid(), ws, std.err)
	if err != nil {
		return nil, err
	}
	// Nothing the sandbox can write may ever run on the host: refuse before starting
	// anything, and pin the sbx program to the file that was checked.
	files, err := hostFiles(client)
	if err != nil {
		return nil, err
	}
	if err := sbx.CheckHostFiles(files, session.Mounts()); err != nil {
		return nil, err
	}
	session.HostFiles = files
	if owners, err := sbx.OwnersFromEnv(environ); err == nil {
		session.Owners = owners // GC collects only what an owner record proves abandoned
	}
	return &sandboxSession{client: client, Session: session, workspace: ws, cwd: dir,
		vmEnv: sbx.NewEnvPolicy(environ).VMEnv(environ), reuse: reuse, environ: environ}, nil
}

// teardown removes (or stops) a sandbox this session created, as DOCKER_SANDBOX_TEARDOWN
// says; it gets a minute of its own even when ctx has ended (a signal).
func (s *sandboxSession) teardown(ctx context.Context) error {
	down, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	return s.Close(down)
}

// hostFiles are the files this process runs on the host or installs into the VM: the sbx
// program (resolved and pinned by ResolveBin), the watchdog's shell, this executable (the
// agent on a linux host of the VM's architecture) and the linux agents beside it.
func hostFiles(c *sbx.Client) ([]sbx.HostFile, error) {
	files := append(c.ResolveBin(), sbx.HostFile{Role: "the watchdog's shell", Path: sbx.WatchdogShell})
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this executable: %w", err)
	}
	files = append(files, sbx.HostFile{Role: "this program (" + prog + ", also the agent it installs)", Path: exe})
	// The agents beside it; one that does not exist is in this executable's directory,
	// which is checked with it.
	for _, arch := range []string{"amd64", "arm64"} {
		p := filepath.Join(filepath.Dir(exe), prog+"-linux-"+arch)
		if _, err := os.Lstat(p); err == nil {
			files = append(files, sbx.HostFile{Role: "the agent binary", Path: p})
		}
	}
	return files, nil
}
