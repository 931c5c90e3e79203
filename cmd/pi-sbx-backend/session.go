package main

import (
	"context"
	"flag"
	"os"
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
}

// workspaceFlags defines --workspace and --cwd.
func workspaceFlags(fs *flag.FlagSet, cwdUsage string) (workspace, cwd *string) {
	workspace = fs.String("workspace", "", "primary workspace of the sandbox (default: the current directory)")
	cwd = fs.String("cwd", "", cwdUsage+" (default: the workspace)")
	return workspace, cwd
}

// newSandboxSession resolves the directories and reads the session's settings
// (DOCKER_SANDBOX*, the env policy) from this process's environment.
func newSandboxSession(std stdio, workspace, cwd string) (*sandboxSession, error) {
	ws, err := absDir(workspace)
	if err != nil {
		return nil, err
	}
	dir := ws
	if cwd != "" {
		if dir, err = absDir(cwd); err != nil {
			return nil, err
		}
	}
	environ := os.Environ()
	client := sbx.NewClient(environ, sbx.ExecRunner{})
	session, err := sbx.NewSession(client, environ, os.Getpid(), ws, std.err)
	if err != nil {
		return nil, err
	}
	return &sandboxSession{client: client, Session: session, workspace: ws, cwd: dir,
		vmEnv: sbx.NewEnvPolicy(environ).VMEnv(environ)}, nil
}

// teardown removes (or stops) a sandbox this session created, as DOCKER_SANDBOX_TEARDOWN
// says; it gets a minute of its own even when ctx has ended (a signal).
func (s *sandboxSession) teardown(ctx context.Context) error {
	down, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	return s.Close(down)
}
