package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/agentlink"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/audit"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/lifecycle"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/journal/recorder"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// loginShell is what `shell` runs without a command: bash if the VM has it, else sh.
var loginShell = []string{"sh", "-c", "if command -v bash >/dev/null 2>&1; then exec bash -l; fi; exec sh -l"}

func shellCommand() command {
	var d dirOptions
	return command{
		name:     "shell",
		synopsis: "[--workspace DIR] [--cwd DIR] [--cloud] [-- CMD [ARG...]]",
		summary:  "an interactive shell (or a command) in the session's sandbox",
		help: `Opens a login shell (bash if the VM has it, else sh), or runs CMD with its arguments,
in the session's sandbox: the same one serve would use, created on first need. The
working directory is DIR (default: the workspace) at its host path. From a terminal it
runs sbx exec -it in the foreground; from a pipe it reads stdin. The command's exit status
is passed through. A sandbox the shell created is removed when it ends; with
DOCKER_SANDBOX=NAME it joins that sandbox and leaves it running, and while the shell
runs, the session that made the sandbox does not remove it.`,
		env:   sandboxEnv,
		flags: func(fs *flag.FlagSet) { d.define(fs, "working `DIR` in the sandbox"); d.defineCloud(fs) },
		run: func(ctx context.Context, std stdio, argv []string) error {
			return runShell(ctx, std, d, argv)
		},
	}
}

// runShell runs argv (a login shell when empty) in the session's sandbox. A terminal is
// handed to sbx exec -it as is; the command's exit status is passed through.
func runShell(ctx context.Context, std stdio, d dirOptions, argv []string) error {
	command := strings.Join(argv, " ") // the journal's short form
	if len(argv) == 0 {
		argv, command = loginShell, "(login shell)"
	}
	if len(command) > 200 {
		command = strings.ToValidUTF8(command[:200], "") + "…"
	}
	sess, err := openSession(ctx, std, d, sessionRole{name: "shell"})
	if err != nil {
		return err
	}
	defer func() {
		if err := sess.End(ctx); err != nil {
			fmt.Fprintf(std.err, "pi-sbx-backend shell: %v\n", err)
		}
	}()
	name, err := sess.Ensure(ctx)
	if err != nil {
		return err
	}
	// In review mode, what the shell changed is a checkpoint of the journal, the
	// shell's own (a failure to take it is said, and never changes the exit status).
	if sess.Settings.Mode == lifecycle.ModeReview {
		ch := &agentlink.Channel{Target: agentlink.Target{
			Sbx: sess.Client, Sandbox: sess.Ensure, Lost: sess.Lost,
			Installer: &agentlink.Installer{Sbx: sess.Client, Version: version},
			Env:       sess.VMEnv, Cwd: sess.Cwd,
		}, Version: version, Stderr: std.err, StartTries: 1}
		defer ch.Close()
		if rec, err := journalRecorder(sess.Settings, sess.Workspace, name, ch); err != nil {
			fmt.Fprintf(std.err, "pi-sbx-backend shell: no journal: %v\n", err)
		} else if err := rec.Start(ctx); err != nil {
			fmt.Fprintf(std.err, "pi-sbx-backend shell: journal: %v\n", err)
		} else {
			what := map[string]string{"command": command}
			defer func() {
				if _, _, err := rec.Record(context.WithoutCancel(ctx), recorder.Call{Client: "shell", Tool: "shell", Args: what}); err != nil {
					fmt.Fprintf(std.err, "pi-sbx-backend shell: journal: %v\n", err)
				}
			}()
		}
	}
	// In every mode the command is a call in the sandbox's audit log, as serve's clients'
	// calls are (a log that cannot be written is said, and never fails the shell).
	alog := shellAuditLog(sess.Settings.StateHome, name, std.err)
	start := time.Now()
	tty := isTerminal(std.in) && isTerminal(std.out)
	res, err := sess.Client.Exec(ctx, name, argv, sbx.ExecOpts{
		Interactive: true, TTY: tty, Foreground: tty,
		Env: sess.VMEnv, Workdir: sess.Cwd,
		Stdin: std.in, Stdout: std.out, Stderr: std.err,
		Timeout: -1, // a human's sess ends when they end it
	})
	if alog != nil {
		if lerr := alog.Shell(command, start, res.ExitCode, err); lerr != nil {
			fmt.Fprintf(std.err, "pi-sbx-backend shell: %v\n", lerr)
		}
	}
	if err != nil {
		return fmt.Errorf("shell in sandbox %s: %w", name, err)
	}
	if res.ExitCode != 0 {
		return exitError{res.ExitCode}
	}
	return nil
}

// shellAuditLog is sandbox name's audit log, or nil (said on stderr) when it cannot be
// opened.
func shellAuditLog(stateHome, name string, stderr io.Writer) *audit.Log {
	store, err := audit.NewStore(stateHome)
	if err == nil {
		var l *audit.Log
		if l, err = store.Open(name); err == nil {
			return l
		}
	}
	fmt.Fprintf(stderr, "pi-sbx-backend shell: no audit log: %v\n", err)
	return nil
}

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
