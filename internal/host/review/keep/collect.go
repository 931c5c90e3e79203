package keep

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/review"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// New returns the Keeper whose store is under stateHome (settings.StateHome), running git
// with the basics of environ (the host environment) and reaching sandboxes through client;
// without a state directory, an error.
func New(stateHome string, environ []string, client *sbx.Client) (*Keeper, error) {
	store, err := NewStore(stateHome)
	if err != nil {
		return nil, err
	}

	return &Keeper{Git: &Git{Environ: environ}, Client: client, Store: store}, nil
}

// Options name what Collect looks for.
type Options struct {
	// Workspace is the host directory (absolute): the newest review session on it (or
	// on a directory containing it) is collected.
	Workspace string
	// Sandbox, when set, is the review sandbox to collect instead (DOCKER_SANDBOX).
	Sandbox string
}

// Collect fetches the sandbox's current work (starting a stopped sandbox first) and
// returns it as Changes; with no sandbox left, the kept refs of the last session for
// this workspace. The Changes' GitDir is the private store; its refs are BaseRef
// (moved forward by land), StartRef and HeadRef of the sandbox.
func Collect(ctx context.Context, k *Keeper, o Options) (review.Changes, error) {
	r, err := k.Find(o)
	if err != nil {
		return review.Changes{}, err
	}
	return k.Collect(ctx, r)
}

// Find returns the record Options name.
func (k *Keeper) Find(o Options) (Record, error) {
	if o.Sandbox != "" {
		r, err := k.Store.Load(o.Sandbox)
		if errors.Is(err, fs.ErrNotExist) {
			return Record{}, fmt.Errorf("sandbox %s: %w", o.Sandbox, ErrNotReview)
		}
		return r, err
	}
	recs, err := k.Store.ForWorkspace(o.Workspace)
	if err != nil {
		return Record{}, err
	}
	if len(recs) == 0 {
		return Record{}, fmt.Errorf("%s: %w", o.Workspace, ErrNoWork)
	}
	return recs[0], nil
}

// ErrNotReview: the sandbox was not made by a review-mode session.
var ErrNotReview = errors.New("not a review-mode sandbox (no record of its start state)")

// Save is teardown's and GC's check before they remove sandbox name: a sandbox with a
// review record has its work collected, and an error says why it must be kept (its
// work could not be collected, or some of it is not landed). Any other sandbox may go.
func (k *Keeper) Save(ctx context.Context, name string) error {
	r, err := k.Store.Load(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	ch, err := k.Collect(ctx, r)
	if err != nil {
		return err
	}
	paths, err := k.Unlanded(ctx, ch)
	if err != nil {
		return err
	}
	return unlanded(paths)
}

// SaveStopped is Save for a sweep that keeps what must be kept (GC without --force),
// of sandboxes that are stopped: when the work kept on the host already has unlanded
// changes, the sandbox stays without being started again — a VM start on every sweep
// otherwise (10–15 s with real sbx) to learn what is already known. Only a sandbox
// whose kept work is all landed (or was never collected) is started and collected
// afresh, as Save does, before it may go. Nothing is lost either way: a sandbox this
// keeps still holds its newest work, and review collects it.
func (k *Keeper) SaveStopped(ctx context.Context, name string) error {
	r, err := k.Store.Load(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	ch, err := k.kept(ctx, r, review.Changes{GitDir: r.GitDir, Root: r.Root, Sandbox: r.Sandbox, BaseRef: BaseRef(r.Sandbox)})
	if err == nil {
		if paths, err := k.Unlanded(ctx, ch); err == nil && len(paths) > 0 {
			return unlanded(paths)
		}
	}
	return k.Save(ctx, name)
}

// unlanded is the error that keeps a sandbox whose work has paths not landed.
func unlanded(paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	return fmt.Errorf("%d unlanded change(s) (%s): see them with `pi-sbx-backend review`, then land or discard them", len(paths), sample(paths))
}

// sample names a few paths.
func sample(paths []string) string {
	if len(paths) <= 3 {
		return strings.Join(paths, ", ")
	}
	return strings.Join(paths[:3], ", ") + ", …"
}
