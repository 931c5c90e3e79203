package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// toolOptions are tool's flags.
type toolOptions struct {
	local        bool
	sandbox, cwd string
}

func toolCommand() command {
	var o toolOptions
	return command{
		name:     "tool",
		synopsis: "(--local | --sandbox NAME) [--cwd DIR] TOOL JSON-ARGS",
		summary:  "run one tool call and print its JSON result",
		help: `Runs one call of TOOL (bash read write edit grep find ls) with JSON-ARGS, its arguments
as a JSON object ("-" reads them from stdin, so large contents need no argv), and prints
one JSON object {"content","details","isError"}. --local runs it on this machine;
--sandbox NAME runs it in that existing sandbox, through the agent. It exits 0 whenever a
result exists (a tool's own failure is isError: true); exit 2 means the call itself was
malformed and nothing was run.`,
		env: []envDoc{
			{"PI_*", "pi's session variables, given to bash (with --sandbox: forwarded into the VM)"},
			{"PI_SBX_BIN", "with --sandbox: the sbx program (default: sbx on PATH, then the usual install places)"},
			{"DOCKER_SANDBOX_ENV_ALLOWLIST", "with --sandbox: as for serve"},
			{"DOCKER_SANDBOX_ENV_PASSTHROUGH", "with --sandbox: as for serve"},
		},
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&o.local, "local", false, "run the tool on this machine")
			fs.StringVar(&o.sandbox, "sandbox", "", "run the tool in the sandbox `NAME`, through the agent")
			fs.StringVar(&o.cwd, "cwd", "", "working `DIR` (default: the current directory)")
		},
		run: func(ctx context.Context, std stdio, args []string) error { return runTool(ctx, std, o, args) },
	}
}

// runTool runs one call, args being TOOL and JSON-ARGS.
func runTool(ctx context.Context, std stdio, o toolOptions, args []string) error {
	if len(args) != 2 {
		return usagef("want TOOL JSON-ARGS, got %d arguments", len(args))
	}
	if o.local == (o.sandbox != "") {
		return usagef("exactly one of --local or --sandbox NAME is required")
	}
	dir := o.cwd
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("finding the current directory: %w", err)
		}
		dir = wd
	}
	name, raw := args[0], []byte(args[1])
	if args[1] == "-" {
		var err error
		if raw, err = io.ReadAll(io.LimitReader(std.in, maxStdinArgs+1)); err != nil {
			return fmt.Errorf("reading arguments from stdin: %w", err)
		}
		if len(raw) > maxStdinArgs {
			return usagef("arguments on stdin exceed %d bytes", maxStdinArgs)
		}
	}
	if o.sandbox != "" {
		return runToolSandbox(ctx, std, o.sandbox, dir, name, raw)
	}
	return runToolLocal(ctx, std, dir, name, raw)
}

// piVars returns the PI_* variables of environ. They are what pi gives its bash tool
// (session id, model, …); in the VM they arrive as serve's explicit -e flags. The bash
// tool takes pi's session variables only from here, never from its own environment.
func piVars(environ []string) []string {
	var out []string
	for _, kv := range environ {
		if strings.HasPrefix(kv, "PI_") {
			out = append(out, kv)
		}
	}
	return out
}

// maxStdinArgs bounds JSON arguments read from stdin: a write of a large file fits, a
// runaway producer does not exhaust memory.
const maxStdinArgs = 256 << 20

// printResult runs call and writes its result as one JSON line.
func printResult(w io.Writer, call func() (any, error)) error {
	res, err := call()
	if errors.Is(err, tools.ErrUsage) {
		return usageError{err.Error()}
	}
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(res)
}
