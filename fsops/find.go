package fsops

import (
	"context"
	"errors"

	"github.com/pi-sbx/pi-sbx-backend/result"
)

// FindArgs are find's arguments.
type FindArgs struct {
	Pattern string   `json:"pattern"`
	Path    string   `json:"path,omitempty"`
	Limit   *float64 `json:"limit,omitempty"`
}

// Find is pi's find tool. TODO(helper): implement.
func Find(ctx context.Context, cwd string, a FindArgs) (result.Result, error) {
	return result.Result{}, errors.New("find: not implemented")
}
