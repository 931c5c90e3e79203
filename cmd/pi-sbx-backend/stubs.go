package main

import (
	"context"
	"errors"
)

// TODO(helpers): each of these moves to its own file when implemented.

func runExec(ctx context.Context, io stdio, args []string) error {
	return errors.New("exec: not implemented yet")
}
