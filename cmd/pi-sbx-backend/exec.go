//go:build linux

package main

import (
	"context"
	"flag"
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/shell"
)

// execFlags are exec's options, parsed like docker exec's: -i, -t, -it, --cwd DIR.
type execFlags struct {
	interactive, tty bool
	cwd              string
	argv             []string
}

func execCommand() command {
	return command{
		name:     "exec",
		synopsis: "[-i] [-t] [--cwd DIR] [--] CMD [ARG...]",
		summary:  "run a command through shell/ on this machine ([-it] for a terminal)",
		help: `Runs CMD with its arguments (no shell) on this machine, the way the agent runs commands
in the VM, and exits with its status (128+n after signal n). Without -i it reads nothing;
-i gives it this stdin; -t runs it under a pseudo-terminal (raw mode on yours, window-size
changes forwarded). A debugging aid: it never touches a sandbox.`,
		// exec parses its flags like docker exec (-it)
		flagDocs: [][2]string{
			{"-i, --interactive", "keep stdin open: the command reads this process's stdin"},
			{"-t, --tty", "run the command under a pseudo-terminal"},
			{"--cwd DIR", "working directory (default: the current directory)"},
		},
		run: runExec,
	}
}

// runExec: pi-sbx-backend exec [-i] [-t] [--cwd DIR] -- CMD [ARG…]. It runs CMD on this
// machine through shell/ — under a pseudo-terminal with -t — and exits with its status.
func runExec(ctx context.Context, std stdio, args []string) error {
	f, err := parseExecFlags(args)
	if err != nil {
		return err
	}
	var code int
	if f.tty {
		code, err = shell.AttachPty(ctx, f.argv, shell.AttachOptions{Dir: f.cwd, In: std.in, Out: std.out, Interactive: f.interactive})
	} else {
		in := std.in
		if !f.interactive {
			in = nil // /dev/null
		}
		code, err = shell.Run(ctx, f.argv, shell.RunOptions{
			Dir: f.cwd, Stdin: in, Stdout: std.out, Stderr: std.err, Foreground: true,
		})
	}
	if err != nil {
		return err
	}
	if code != 0 {
		return exitError{code}
	}
	return nil
}

func parseExecFlags(args []string) (execFlags, error) {
	var f execFlags
	for len(args) > 0 {
		a := args[0]
		args = args[1:]
		switch {
		case a == "--":
			f.argv = args
			args = nil
		case a == "-h" || a == "-help" || a == "--help":
			return f, flag.ErrHelp
		case a == "--interactive":
			f.interactive = true
		case a == "--tty":
			f.tty = true
		case a == "--cwd" || a == "-cwd":
			if len(args) == 0 {
				return f, usagef("--cwd needs a directory")
			}
			f.cwd, args = args[0], args[1:]
		case strings.HasPrefix(a, "--cwd="):
			f.cwd = strings.TrimPrefix(a, "--cwd=")
		case len(a) > 1 && a[0] == '-' && strings.Trim(a[1:], "it") == "":
			f.interactive = f.interactive || strings.Contains(a, "i")
			f.tty = f.tty || strings.Contains(a, "t")
		case strings.HasPrefix(a, "-"):
			return f, usagef("unknown flag %s", a)
		default:
			f.argv = append([]string{a}, args...)
			args = nil
		}
	}
	if len(f.argv) == 0 {
		return f, usagef("no command to run")
	}
	return f, nil
}
