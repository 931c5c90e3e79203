package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

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
	workspace := fs.String("workspace", "", "primary workspace of the sandbox (default: the current directory)")
	cwd := fs.String("cwd", "", "working directory in the sandbox (default: the workspace)")
	if err := fs.Parse(args); err != nil {
		return usagef("%v", err)
	}
	argv := fs.Args()
	if len(argv) == 0 {
		argv = loginShell
	}
	ws, err := absDir(*workspace)
	if err != nil {
		return err
	}
	dir := ws
	if *cwd != "" {
		if dir, err = absDir(*cwd); err != nil {
			return err
		}
	}
	environ := os.Environ()
	client := sbx.NewClient(environ, sbx.ExecRunner{})
	session, err := sbx.NewSession(client, environ, os.Getpid(), ws, std.err)
	if err != nil {
		return err
	}
	defer func() {
		down, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := session.Close(down); err != nil {
			fmt.Fprintf(std.err, "pi-sbx-backend shell: %v\n", err)
		}
	}()
	name, err := session.Ensure(ctx)
	if err != nil {
		return err
	}
	tty := isTerminal(std.in) && isTerminal(std.out)
	res, err := client.Exec(ctx, name, argv, sbx.ExecOpts{
		Interactive: true, TTY: tty, Foreground: tty,
		Env: sbx.NewEnvPolicy(environ).VMEnv(environ), Workdir: dir,
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
