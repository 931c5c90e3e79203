//go:build !linux

package main

import (
	"context"
	"runtime"
)

// runToolLocal: the tools' implementations (fsops/, shell/) are the in-VM half and are
// built for linux only; elsewhere a call goes through a sandbox.
func runToolLocal(context.Context, stdio, string, string, []byte) error {
	return usagef("--local runs tools on linux only (this is %s/%s); use --sandbox NAME", runtime.GOOS, runtime.GOARCH)
}
