// Package shell runs commands as pi 1.6.0's bash tool does (process group, timeout,
// tail truncation, full-output file) and under pseudo-terminals. It knows nothing of
// sandboxes or protocols.
package shell

import (
	"context"
	"errors"

	"github.com/pi-sbx/pi-sbx-backend/result"
)

// BashArgs are bash's arguments.
type BashArgs struct {
	Command string   `json:"command"`
	Timeout *float64 `json:"timeout,omitempty"`
}

// BashOptions carry what is not an argument.
type BashOptions struct {
	Env      []string            // extra KEY=VALUE variables (pi's PI_*)
	OnUpdate func(result.Result) // partial results, throttled; may be nil
}

// Bash is pi's bash tool. TODO(helper): implement.
func Bash(ctx context.Context, cwd string, a BashArgs, o BashOptions) (result.Result, error) {
	return result.Result{}, errors.New("bash: not implemented")
}
