package sbx

import (
	"context"
	"fmt"
	"time"
)

// lockPoll is how often a waiting Lock tries again: the lock is held while another
// process decides about, or tears down, the sandbox — a few seconds at most.
const lockPoll = 20 * time.Millisecond

// pollLock calls try until it takes the lock (true), fails, or ctx ends. The OS calls
// that would wait cannot be cancelled, so Lock polls non-blocking ones (flock(2) with
// LOCK_NB, LockFileEx with LOCKFILE_FAIL_IMMEDIATELY).
func pollLock(ctx context.Context, name string, try func() (bool, error)) error {
	for {
		ok, err := try()
		switch {
		case err != nil:
			return fmt.Errorf("locking the leases on sandbox %s: %w", name, err)
		case ok:
			return nil
		}
		if !pause(ctx, lockPoll) {
			return fmt.Errorf("waiting for the lease lock of sandbox %s: %w", name, ctx.Err())
		}
	}
}
