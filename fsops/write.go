package fsops

import (
	"context"
	"errors"

	"github.com/pi-sbx/pi-sbx-backend/result"
)

// WriteArgs are write's arguments.
type WriteArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// Write is pi's write tool. TODO(helper): implement.
func Write(ctx context.Context, cwd string, a WriteArgs) (result.Result, error) {
	return result.Result{}, errors.New("write: not implemented")
}
