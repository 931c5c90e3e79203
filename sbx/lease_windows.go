//go:build windows

package sbx

import (
	"context"
	"errors"

	"golang.org/x/sys/windows"
)

// Lock serializes taking a lease on sandbox name with deciding to tear it down, across
// processes (see lease_unix.go). The lock is LockFileEx's on the first byte of the lock
// file, which Windows releases when its holder's handle closes, or the holder dies;
// waiting for it ends with ctx.
func (l *Leases) Lock(ctx context.Context, name string) (unlock func(), err error) {
	f, err := l.openLock(name)
	if err != nil {
		return nil, err
	}
	h := windows.Handle(f.Fd())
	err = pollLock(ctx, name, func() (bool, error) {
		var ol windows.Overlapped
		err := windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, windows.ERROR_LOCK_VIOLATION), errors.Is(err, windows.ERROR_IO_PENDING):
			return false, nil
		default:
			return false, err
		}
	})
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		var ol windows.Overlapped
		windows.UnlockFileEx(h, 0, 1, 0, &ol)
		f.Close()
	}, nil
}

// WatchdogLock is unsupported on Windows, where there is no watchdog (no /bin/sh).
func WatchdogLock(int) error { return errors.ErrUnsupported }
