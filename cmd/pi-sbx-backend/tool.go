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

	"github.com/pi-sbx/pi-sbx-backend/tools"
)

// runTool: pi-sbx-backend tool (--local | --sandbox NAME) [--cwd DIR] NAME 'JSON-ARGS'.
// JSON-ARGS "-" reads the arguments from stdin (no argv size limit). It prints one JSON
// object {"content","details","isError"} and exits 0 whenever a result exists (a tool's own failure is isError:true); exit 2 means the call itself was
// malformed and nothing was run.
func runTool(ctx context.Context, std stdio, args []string) error {
	fs := flag.NewFlagSet("tool", flag.ContinueOnError)
	fs.SetOutput(std.err)
	localFlag := fs.Bool("local", false, "run the tool on this machine")
	sandbox := fs.String("sandbox", "", "run the tool in the named sandbox, through the agent")
	cwd := fs.String("cwd", "", "working directory (default: the current directory)")
	if err := fs.Parse(args); err != nil {
		return usagef("%v", err)
	}
	if fs.NArg() != 2 {
		return usagef("want NAME 'JSON-ARGS', got %d arguments", fs.NArg())
	}
	if *localFlag == (*sandbox != "") {
		return usagef("exactly one of --local or --sandbox NAME is required")
	}
	dir := *cwd
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("finding the current directory: %w", err)
		}
		dir = wd
	}
	name, raw := fs.Arg(0), []byte(fs.Arg(1))
	if fs.Arg(1) == "-" {
		var err error
		if raw, err = io.ReadAll(io.LimitReader(std.in, maxStdinArgs+1)); err != nil {
			return fmt.Errorf("reading arguments from stdin: %w", err)
		}
		if len(raw) > maxStdinArgs {
			return usagef("arguments on stdin exceed %d bytes", maxStdinArgs)
		}
	}
	if *sandbox != "" {
		return runToolSandbox(ctx, std, *sandbox, dir, name, raw)
	}
	return printResult(std.out, func() (any, error) {
		return tools.Default().Call(ctx, dir, name, raw, tools.Env{Vars: piVars(os.Environ())})
	})
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
