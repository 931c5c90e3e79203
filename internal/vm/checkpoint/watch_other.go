//go:build !linux

package checkpoint

import "errors"

// Watch tracks changed paths of a work tree; only Linux (the VM) has it.
type Watch struct{}

// NewWatch fails: a checkpoint looks at all of the tree.
func NewWatch(string) (*Watch, error) { return nil, errors.New("checkpoint: no inotify here") }

// Close does nothing.
func (w *Watch) Close() {}

// Lose does nothing: Changed is always all.
func (w *Watch) Lose() {}

// Changed is always all.
func (w *Watch) Changed() ([]string, bool) { return nil, true }
