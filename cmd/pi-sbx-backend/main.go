// Command pi-sbx-backend runs pi's tools inside a Docker Sandboxes (sbx) microVM.
//
//	pi-sbx-backend serve                     MCP server on stdio; tools run in the sandbox
//	pi-sbx-backend agent                     MCP server inside the VM (started by serve)
//	pi-sbx-backend tool --local|--sandbox N  one tool call, one JSON result on stdout
//	pi-sbx-backend shell [-- CMD…]           a shell (or CMD) in the session's sandbox
//	pi-sbx-backend exec [-it] -- CMD…        run a command through shell/ (locally)
//	pi-sbx-backend version
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set by the build (-ldflags "-X main.version=…").
var version = "dev"

// usageError is a command-line mistake: reported on one line, exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// exitError carries an exit status through without another message (exec passes its
// command's status through).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// stdio is the process's standard streams, injected so commands are testable.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

type command struct {
	name, summary string
	run           func(ctx context.Context, std stdio, args []string) error
}

func commands() []command {
	return []command{
		{"serve", "MCP server on stdio; every tool call runs in the session's sandbox", runServe},
		{"agent", "MCP server with the seven tools, run inside the sandbox by serve", runAgent},
		{"tool", "run one tool call and print its JSON result", runTool},
		{"shell", "an interactive shell (or a command) in the session's sandbox", runShell},
		{"exec", "run a command through shell/ on this machine ([-it] for a terminal)", runExec},
		{"version", "print the version", func(_ context.Context, std stdio, _ []string) error {
			fmt.Fprintln(std.out, "pi-sbx-backend", version)
			return nil
		}},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, stdio{os.Stdin, os.Stdout, os.Stderr}, os.Args[1:]))
}

func run(ctx context.Context, std stdio, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(std.err)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, std, args[1:])
		var ue usageError
		var ee exitError
		switch {
		case err == nil:
			return 0
		case errors.As(err, &ee):
			return ee.code
		case errors.As(err, &ue):
			fmt.Fprintf(std.err, "pi-sbx-backend %s: %s\n", c.name, ue.msg)
			return 2
		default:
			fmt.Fprintf(std.err, "pi-sbx-backend %s: %v\n", c.name, err)
			return 1
		}
	}
	fmt.Fprintf(std.err, "pi-sbx-backend: unknown command %q (run pi-sbx-backend help)\n", args[0])
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: pi-sbx-backend COMMAND [flags]")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
}
