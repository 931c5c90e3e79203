package fsops

import (
	"context"
	"errors"

	"github.com/pi-sbx/pi-sbx-backend/result"
)

// Replacement is one targeted edit.
type Replacement struct {
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

// EditArgs are edit's arguments after PrepareEditArgs.
type EditArgs struct {
	Path  string        `json:"path"`
	Edits []Replacement `json:"edits"`
}

// PrepareEditArgs accepts the legacy shapes pi accepts. TODO(helper): implement.
func PrepareEditArgs(in map[string]any) (map[string]any, error) { return in, nil }

// Edit is pi's edit tool. TODO(helper): implement.
func Edit(ctx context.Context, cwd string, a EditArgs) (result.Result, error) {
	return result.Result{}, errors.New("edit: not implemented")
}
