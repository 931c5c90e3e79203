package fsops

import (
	"context"
	"errors"

	"github.com/pi-sbx/pi-sbx-backend/result"
)

// GrepArgs are grep's arguments.
type GrepArgs struct {
	Pattern    string   `json:"pattern"`
	Path       string   `json:"path,omitempty"`
	Glob       string   `json:"glob,omitempty"`
	IgnoreCase bool     `json:"ignoreCase,omitempty"`
	Literal    bool     `json:"literal,omitempty"`
	Context    *float64 `json:"context,omitempty"`
	Limit      *float64 `json:"limit,omitempty"`
}

// Grep is pi's grep tool. TODO(helper): implement.
func Grep(ctx context.Context, cwd string, a GrepArgs) (result.Result, error) {
	return result.Result{}, errors.New("grep: not implemented")
}
