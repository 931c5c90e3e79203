package fsops

import (
	"context"
	"errors"

	"github.com/pi-sbx/pi-sbx-backend/result"
)

// LsArgs are ls's arguments.
type LsArgs struct {
	Path  string   `json:"path,omitempty"`
	Limit *float64 `json:"limit,omitempty"`
}

// Ls is pi's ls tool. TODO(helper): implement.
func Ls(ctx context.Context, cwd string, a LsArgs) (result.Result, error) {
	return result.Result{}, errors.New("ls: not implemented")
}
