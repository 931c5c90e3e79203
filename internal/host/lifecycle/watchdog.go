package lifecycle

import (
	"fmt"
	"strconv"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// StartWatchdog arms the door's teardown watchdog (sbx.Client.StartWatchdog) for sandbox
// name: `sbx rm --force` (mode TeardownRemove) or `sbx stop` (TeardownStop) once process
// owner is gone and no other process holds a lease on it in leases (nil: none are kept).
// poll is how often it checks (2s when zero); locker is the program that takes the lease
// lock for it (sbx.WatchdogLockCommand), "" none.
func StartWatchdog(c *sbx.Client, owner int, name, mode string, poll time.Duration, leases *Leases, locker string) (*sbx.Watchdog, error) {
	if err := sbx.ValidateName(name); err != nil {
		return nil, err
	}
	switch mode {
	case TeardownRemove, TeardownStop:
	default:
		return nil, fmt.Errorf("watchdog: teardown mode %q", mode)
	}
	var dir, lock string
	if leases != nil {
		var err error
		if dir, err = leases.sandboxDir(name); err != nil {
			return nil, err
		}
		lock = leases.lockPath(name)
	}
	return c.StartWatchdog(owner, name, mode == TeardownStop, poll, dir, lock, locker)
}

// RunWatchdogLock is sbx.WatchdogLockCommand: args are the descriptor to lock.
func RunWatchdogLock(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("%s: want one descriptor, got %q", sbx.WatchdogLockCommand, args)
	}
	fd, err := strconv.Atoi(args[0])
	if err != nil || fd < 3 {
		return fmt.Errorf("%s: %q is not a descriptor the shell opened", sbx.WatchdogLockCommand, args[0])
	}
	return WatchdogLock(fd)
}
