package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/pi-sbx/pi-sbx-backend/tools"
)

// runTool: pi-sbx-backend tool (--local | --sandbox NAME) [--cwd DIR] NAME 'JSON-ARGS'.
// It prints one JSON object {"content","details","isError"} and exits 0 whenever a
// result exists (a tool's own failure is isError:true); exit 2 means the call itself was
// malformed and nothing was run.
func runTool(ctx context.Context, io stdio, args []string) error {
	fs := flag.NewFlagSet("tool", flag.ContinueOnError)
	fs.SetOutput(io.err)
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
	if *sandbox != "" {
		return runToolSandbox(ctx, io, *sandbox, dir, name, raw)
	}
	return printResult(io.out, func() (any, error) {
		return tools.Default().Call(ctx, dir, name, raw, tools.Env{})
	})
}

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
