package main

import (
	"context"
	"errors"
)

// TODO(helpers): each of these moves to its own file when implemented.

func runServe(ctx context.Context, io stdio, args []string) error {
	return errors.New("serve: not implemented yet")
}

func runAgent(ctx context.Context, io stdio, args []string) error {
	return errors.New("agent: not implemented yet")
}

func runExec(ctx context.Context, io stdio, args []string) error {
	return errors.New("exec: not implemented yet")
}

func runToolSandbox(ctx context.Context, io stdio, sandbox, cwd, name string, raw []byte) error {
	return errors.New("tool --sandbox: not implemented yet")
}
