package fsops

import (
	"context"
	"errors"

	"github.com/pi-sbx/pi-sbx-backend/result"
)

// ReadArgs are read's arguments.
type ReadArgs struct {
	Path   string   `json:"path"`
	Offset *float64 `json:"offset,omitempty"`
	Limit  *float64 `json:"limit,omitempty"`
}

// Read is pi's read tool. TODO(helper): implement.
func Read(ctx context.Context, cwd string, a ReadArgs) (result.Result, error) {
	return result.Result{}, errors.New("read: not implemented")
}
