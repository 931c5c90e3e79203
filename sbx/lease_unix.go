//go:build unix

package sbx

import (
	"context"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Lock serializes taking a lease on sandbox name with deciding to tear it down, across
// processes: a joiner's lease is either seen by the teardown or taken after it. The lock
// is flock(2)'s, which the kernel releases when its holder dies; waiting for it ends with
// ctx.
func (l *Leases) Lock(ctx context.Context, name string) (unlock func(), err error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(l.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("locking the leases on sandbox %s: %w", name, err)
	}
	f, err := os.OpenFile(l.lockPath(name), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("locking the leases on sandbox %s: %w", name, err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch err {
		case nil:
			return func() { f.Close() }, nil // closing the descriptor releases the lock
		case unix.EWOULDBLOCK, unix.EINTR:
		default:
			f.Close()
			return nil, fmt.Errorf("locking the leases on sandbox %s: %w", name, err)
		}
		// Held while another process tears the sandbox down: a few seconds at most.
		if !pause(ctx, 20*time.Millisecond) {
			f.Close()
			return nil, fmt.Errorf("waiting for the lease lock of sandbox %s: %w", name, ctx.Err())
		}
	}
}
