//go:build !linux

package checkpoint

import (
	"context"
	"errors"
)

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

func (w *Watch) changed(context.Context, Journal, string) ([]string, bool) { return nil, true }
func (w *Watch) lose()                                                     {}

// Scan finds changed files by their stat; only Linux (the VM) has it.
type Scan struct{}

// NewScan returns a scan whose every answer is all.
func NewScan(string) *Scan { return &Scan{} }

// Close does nothing.
func (s *Scan) Close() {}

func (s *Scan) changed(context.Context, Journal, string) ([]string, bool) { return nil, true }
func (s *Scan) lose()                                                     {}
