package keep

import (
	"context"
	"errors"
	"fmt"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/lifecycle"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/settings"
)

// Work is the work review, land and discard act on: the review sandbox's current work
// (fetched from it, started first if stopped), or the kept refs of one that is gone.
type Work struct {
	keeper  *Keeper
	client  *sbx.Client
	sandbox string // DOCKER_SANDBOX (serve's own sandbox, for pi_sbx_review); "" for the newest
	reuse   bool
}

// OpenWork finds the sandbox as shell does: DOCKER_SANDBOX, or with DOCKER_SANDBOX_REUSE
// the project's; otherwise the newest review session of the workspace (running or ended).
func OpenWork(st settings.Settings) (*Work, error) {
	client := st.Client(sbx.ExecRunner{})
	k, err := New(st.StateHome, st.Environ, client)
	if err != nil {
		return nil, err
	}
	return &Work{keeper: k, client: client, sandbox: st.Sandbox, reuse: st.Reuse}, nil
}

// Collect returns the work for workspace ws (absolute), with BaseRef set.
func (w *Work) Collect(ctx context.Context, ws string) (review.Changes, error) {
	name := w.sandbox
	if name == "" && w.reuse {
		name = lifecycle.ProjectName(ws)
	}
	return Collect(ctx, w.keeper, Options{Workspace: ws, Sandbox: name})
}

// Discard drops the work: the sandbox, which holds its own copy of it, is removed (a
// session still using it makes a fresh one from the host's workspace at its next call),
// then the record and private store of its work.
func (w *Work) Discard(ctx context.Context, c review.Changes) error {
	client := w.client
	if r, err := w.keeper.Store.Load(c.Sandbox); err == nil {
		client = w.keeper.clientFor(r) // a cloud sandbox is reached with --cloud
	}
	if _, err := client.Lookup(ctx, c.Sandbox); err == nil {
		if err := client.Rm(ctx, c.Sandbox); err != nil {
			return fmt.Errorf("removing sandbox %s, which holds the work: %w", c.Sandbox, err)
		}
	} else if !errors.Is(err, sbx.ErrMissing) {
		return fmt.Errorf("looking up sandbox %s: %w", c.Sandbox, err)
	}
	if err := w.keeper.Store.Forget(ctx, c.Sandbox); err != nil {
		return fmt.Errorf("discarding the kept work of %s: %w", c.Sandbox, err)
	}
	return nil
}
