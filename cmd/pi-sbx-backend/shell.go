package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"golang.org/x/term"

	"github.com/pi-sbx/pi-sbx-backend/sbx"
)

// loginShell is what `shell` runs without a command: bash if the VM has it, else sh.
var loginShell = []string{"sh", "-c", "if command -v bash >/dev/null 2>&1; then exec bash -l; fi; exec sh -l"}

// runShell: pi-sbx-backend shell [--workspace DIR] [--cwd DIR] [-- CMD…]. A shell (or
// CMD) in the session's sandbox — the same one serve would use, created on first need —
// in DIR, which is the workspace at its host path. A terminal is handed to
// `sbx exec -it` as is; the command's exit status is passed through.
func runShell(ctx context.Context, std stdio, args []string) error {
	fs := flag.NewFlagSet("shell", flag.ContinueOnError)
	fs.SetOutput(std.err)
	workspace, cwd := workspaceFlags(fs, "working directory in the sandbox")
	if err := fs.Parse(args); err != nil {
		return usagef("%v", err)
	}
	argv := fs.Args()
	if len(argv) == 0 {
		argv = loginShell
	}
	session, err := newSandboxSession(std, *workspace, *cwd)
	if err != nil {
		return err
	}
	defer func() {
		if err := session.teardown(ctx); err != nil {
			fmt.Fprintf(std.err, "pi-sbx-backend shell: %v\n", err)
		}
	}()
	name, err := session.Ensure(ctx)
	if err != nil {
		return err
	}
	tty := isTerminal(std.in) && isTerminal(std.out)
	res, err := session.client.Exec(ctx, name, argv, sbx.ExecOpts{
		Interactive: true, TTY: tty, Foreground: tty,
		Env: session.vmEnv, Workdir: session.cwd,
		Stdin: std.in, Stdout: std.out, Stderr: std.err,
		Timeout: -1, // a human's session ends when they end it
	})
	if err != nil {
		return fmt.Errorf("shell in sandbox %s: %w", name, err)
	}
	if res.ExitCode != 0 {
		return exitError{res.ExitCode}
	}
	return nil
}

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
