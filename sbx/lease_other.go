//go:build !unix && !windows

package sbx

import (
	"context"
	"errors"
)

// Lock is a no-op where neither flock(2) nor LockFileEx exists: a lease taken while
// another process tears the sandbox down may then find it gone (the call fails closed,
// or warm re-use makes it again).
func (l *Leases) Lock(_ context.Context, name string) (unlock func(), err error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	return func() {}, nil
}

// WatchdogLock is unsupported here: there is no watchdog.
func WatchdogLock(int) error { return errors.ErrUnsupported }
