// Command pi-sbx-backend runs pi's tools inside a Docker Sandboxes (sbx) microVM.
//
//	pi-sbx-backend serve                     MCP server on stdio; tools run in the sandbox
//	pi-sbx-backend agent                     MCP server inside the VM (started by serve)
//	pi-sbx-backend tool --local|--sandbox N  one tool call, one JSON result on stdout
//	pi-sbx-backend shell [-- CMD…]           a shell (or CMD) in the session's sandbox
//	pi-sbx-backend exec [-it] -- CMD…        run a command through shell/ (locally)
//	pi-sbx-backend review|land|discard       a review-mode sandbox's work: see it, land it, drop it
//	pi-sbx-backend version
//	pi-sbx-backend help [COMMAND]          (or COMMAND --help) flags and environment
//
// cli.go is the framework: a command is a value in commands() with its flags, help and
// environment; parsing, --help and error reporting are the same for all.
package main

import (
	"context"
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

// commands are the subcommands, in the order help lists them.
func commands() []command {
	return append([]command{
		serveCommand(),
		shellCommand(),
		toolCommand(),
		verifyCommand(),
		gcCommand(),
		logCommand(),
		doctorCommand(),
		networkCommand("allow"),
		networkCommand("deny"),
		versionCommand(),
		watchdogLockCommand(),
	}, append(reviewCommands(openKeptWork), localCommands()...)...)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, stdio{os.Stdin, os.Stdout, os.Stderr}, os.Args[1:]))
}
