//go:build unix

package lifecycle

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

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
