package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/lifecycle"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/keep"
)

// reviewMode sets up DOCKER_SANDBOX_WORKSPACE_MODE=review in a session's options: a git workspace
// becomes an `sbx create --clone` sandbox, any other a read-only mount with a
// copy-on-write layer; the start state is written on the host when the sandbox is made,
// and teardown (and the watchdog, which only stops) keeps the work. It returns the host
// directories the sandbox can read from, for the host-file check.
//
// A cloud sandbox (cloud) mounts nothing: the start state is shipped in instead, as a
// bundle (git) or an archive (keep's cloud.go), with the paths ship asks for although
// they are left out (keep's ship.go).
func reviewMode(s *lifecycle.SessionOptions, k *keep.Keeper, cloud bool, ship []string) string {
	rec := k.NewRecord(s.Name, s.Workspace)
	switch {
	case cloud:
		rec = k.NewCloudRecord(s.Name, s.Workspace)
		rec.Ship = ship
	case rec.Kind == keep.KindClone:
		s.Clone = true
	default:
		s.ReadOnly = true // sbx mounts it read-only; the layer is laid over it in the VM
	}
	s.Started = func(ctx context.Context, name string, created bool) error {
		if created {
			if err := k.Begin(ctx, rec); err != nil {
				return err
			}
		} else if kept, err := k.Store.Load(name); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("it exists but was not made in review mode (its workspace may be mounted read/write): remove it or choose another sandbox")
		} else if err != nil {
			return err
		} else if kept.Kind != rec.Kind || kept.Root != rec.Root || kept.Cloud != rec.Cloud {
			return fmt.Errorf("it was made in review mode for %s (%s), not for %s", kept.Root, kept.Kind, rec.Root)
		}
		if created || rec.Kind == keep.KindOverlay { // a restarted VM lost its mounts
			return k.Seed(ctx, rec)
		}
		return nil
	}
	s.Keep = k.Save
	return rec.Root
}
