//go:build linux

package main

import (
	"context"
	"os"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/vmagent"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// runToolLocal runs one call on this machine, with pi's PI_* variables for bash. The
// terminal tools go to this user's terminal server (started if none runs), since their
// sessions must outlive this process.
func runToolLocal(ctx context.Context, std stdio, dir, name string, raw []byte) error {
	return printResult(std.out, func() (any, error) {
		reg := vmagent.WithTerminals(vmagent.TerminalClient(terminalDialer()))
		return reg.Call(ctx, dir, name, raw, tools.Env{Vars: piVars(os.Environ())})
	})
}
