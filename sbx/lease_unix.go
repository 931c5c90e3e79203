//go:build unix

package sbx

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Lock serializes taking a lease on sandbox name with deciding to tear it down, across
// processes: a joiner's lease is either seen by the teardown or taken after it. The lock
// is flock(2)'s, which the kernel releases when its holder dies; waiting for it ends with
// ctx.
func (l *Leases) Lock(ctx context.Context, name string) (unlock func(), err error) {
	f, err := l.openLock(name)
	if err != nil {
		return nil, err
	}
	err = pollLock(ctx, name, func() (bool, error) {
		switch err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err {
		case nil:
			return true, nil
		case unix.EWOULDBLOCK, unix.EINTR:
			return false, nil
		default:
			return false, err
		}
	})
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil // closing the descriptor releases the lock
}

// WatchdogLock waits for the lease lock on descriptor fd, which the watchdog's shell
// opened on the lock file and keeps open (WatchdogLockCommand runs this). flock(2)'s lock
// belongs to the open file, not to this process, so it stays taken after this returns,
// until the shell closes the descriptor or dies: the same lock Lock takes, without
// flock(1), which macOS lacks.
func WatchdogLock(fd int) error {
	for {
		err := unix.Flock(fd, unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			if err != nil {
				return fmt.Errorf("locking descriptor %d: %w", fd, err)
			}
			return nil
		}
	}
}
