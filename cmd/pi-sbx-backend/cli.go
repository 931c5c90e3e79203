package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/settings"
)

// command is one subcommand. Adding one is adding a value to commands(): the framework
// parses its flags, answers --help/-h/`help NAME` from these fields, and reports bad
// command lines the same way for every command.
type command struct {
	name     string
	synopsis string // what follows the name on the usage line, e.g. "[--cwd DIR] NAME ARGS"
	summary  string // one line, for the command list
	help     string // what it does and what its arguments mean (plain text, wrapped)
	env      []envDoc
	// internal commands are started by the backend itself (in the VM), not by people;
	// they are listed apart.
	internal bool
	// flags defines the command's flags. nil means the command parses its own command
	// line (exec's docker-style -it) and returns flag.ErrHelp from run for -h/--help.
	flags func(fs *flag.FlagSet)
	// flagDocs document the flags of a command that parses its own command line.
	flagDocs [][2]string
	// run runs the command with what follows its flags.
	run func(ctx context.Context, std stdio, args []string) error
}

// envDoc names an environment variable a command reads.
type envDoc struct{ name, meaning string }

const prog = "pi-sbx-backend"

// lookup finds a command of cmds by name.
func lookup(cmds []command, name string) (command, bool) {
	for _, c := range cmds {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func run(ctx context.Context, std stdio, args []string) int {
	return runWith(ctx, std, args, commands())
}

// runWith runs the command of cmds that args name (tests give their own cmds).
func runWith(ctx context.Context, std stdio, args []string, cmds []command) int {
	usage := func(w io.Writer) { usageOf(w, cmds) }
	if len(args) == 0 {
		usage(std.err)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(std.out)
		return 0
	case "help":
		if len(args) == 1 {
			usage(std.out)
			return 0
		}
		if args[1] == "settings" && len(args) == 2 {
			settingsHelp(std.out)
			return 0
		}
		c, ok := lookup(cmds, args[1])
		if !ok || len(args) > 2 {
			fmt.Fprintf(std.err, "%s help: unknown command %q\nRun '%s help' for the list of commands.\n", prog, strings.Join(args[1:], " "), prog)
			return 2
		}
		c.printHelp(std.out)
		return 0
	}
	c, ok := lookup(cmds, args[0])
	if !ok {
		fmt.Fprintf(std.err, "%s: unknown command %q\nRun '%s help' for the list of commands.\n", prog, args[0], prog)
		return 2
	}
	err := c.parseAndRun(ctx, std, args[1:])
	var ue usageError
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		c.printHelp(std.out)
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		fmt.Fprintf(std.err, "%s %s: %s\nRun '%s %s --help' for usage.\n", prog, c.name, ue.msg, prog, c.name)
		return 2
	default:
		fmt.Fprintf(std.err, "%s %s: %v\n", prog, c.name, err)
		return 1
	}
}

// parseAndRun parses c's flags (if it declares them) and runs it.
func (c command) parseAndRun(ctx context.Context, std stdio, args []string) error {
	if c.flags == nil {
		return c.run(ctx, std, args)
	}
	fs := c.flagSet()
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{flagMessage(err)}
	}
	return c.run(ctx, std, fs.Args())
}

// flagSet returns c's flags, silent: the framework prints errors and help itself, once.
func (c command) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if c.flags != nil {
		c.flags(fs)
	}
	return fs
}

// flagRef matches the flag names in the flag package's messages ("-workspace"), which
// the docs and the help spell with two dashes.
var flagRef = regexp.MustCompile(`(^|[\s:])-([A-Za-z][A-Za-z0-9-]+)`)

// flagMessage rewrites a flag package error in the help's own spelling.
func flagMessage(err error) string {
	msg := strings.Replace(err.Error(), "flag provided but not defined", "unknown flag", 1)
	return flagRef.ReplaceAllString(msg, "$1--$2")
}

// printHelp writes c's help: usage line, description, flags, environment.
func (c command) printHelp(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s %s", prog, c.name)
	if c.synopsis != "" {
		fmt.Fprintf(w, " %s", c.synopsis)
	}
	fmt.Fprintln(w)
	if c.internal {
		fmt.Fprintln(w, "\n(internal: started by the backend itself, not meant to be run by hand)")
	}
	if c.help != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(c.help))
	}
	fs := c.flagSet()
	var rows [][2]string
	fs.VisitAll(func(f *flag.Flag) {
		kind, text := flag.UnquoteUsage(f)
		name := "--" + f.Name
		if len(f.Name) == 1 {
			name = "-" + f.Name
		}
		if kind != "" {
			name += " " + strings.ToUpper(kind)
		}
		if f.DefValue != "" && f.DefValue != "false" && !strings.Contains(text, "(default") {
			text += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		rows = append(rows, [2]string{name, text})
	})
	rows = append(rows, c.flagDocs...)
	rows = append(rows, [2]string{"-h, --help", "print this help"})
	fmt.Fprintln(w, "\nFlags:")
	table(w, rows)
	if len(c.env) > 0 {
		fmt.Fprintln(w, "\nEnvironment:")
		env := make([][2]string, len(c.env))
		for i, e := range c.env {
			env[i] = [2]string{e.name, e.meaning}
		}
		table(w, env)
	}
}

func table(w io.Writer, rows [][2]string) {
	width := 0
	for _, r := range rows {
		width = max(width, len(r[0]))
	}
	for _, r := range rows {
		fmt.Fprintf(w, "  %-*s  %s\n", width, r[0], r[1])
	}
}

// usageOf writes the top-level help listing cmds.
func usageOf(w io.Writer, cmds []command) {
	fmt.Fprintf(w, "Usage: %s COMMAND [flags]\n\n", prog)
	fmt.Fprintln(w, "Runs pi's tools (bash read write edit grep find ls) inside a Docker Sandboxes (sbx) microVM.")
	for _, internal := range []bool{false, true} {
		if internal {
			fmt.Fprintln(w, "\nInternal commands (started by the backend inside the sandbox):")
		} else {
			fmt.Fprintln(w, "\nCommands:")
		}
		var rows [][2]string
		for _, c := range cmds {
			if c.internal == internal {
				rows = append(rows, [2]string{c.name, c.summary})
			}
		}
		table(w, rows)
	}
	fmt.Fprintf(w, "\nRun '%s help COMMAND' or '%s COMMAND --help' for a command's flags and environment.\n", prog, prog)
}

// settingsHelp lists every variable the host side reads (docs/settings.md's table).
func settingsHelp(w io.Writer) {
	fmt.Fprintf(w, "Settings %s reads from its environment (an empty value is unset; yes/no ones take 1 or 0):\n\n", prog)
	for _, v := range settings.Vars() {
		fmt.Fprintf(w, "  %s  %s", v.Name, v.Type)
		if v.Default != "" {
			fmt.Fprintf(w, " (default: %s)", v.Default)
		}
		fmt.Fprintf(w, "\n      %s\n", v.Meaning)
	}
}

// noArgs is for commands that take flags only.
func noArgs(args []string) error {
	if len(args) != 0 {
		return usagef("unexpected arguments %q", args)
	}
	return nil
}
