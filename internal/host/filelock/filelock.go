// Package filelock takes exclusive locks on files across processes: flock(2) on unix,
// LockFileEx on Windows. Both are released by the kernel when the holder closes the file
// or dies, so a crash never leaves a lock behind.
package filelock

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Poll is how often a waiting Lock tries again. The OS calls that would wait cannot be
// cancelled, so Lock polls non-blocking ones and ends with its context.
const Poll = 20 * time.Millisecond

// Lock waits until this process holds the exclusive lock on path (created, 0600, if
// missing) or ctx ends. unlock releases it.
func Lock(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening lock file: %w", err)
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		ok, err := tryLock(f)
		switch {
		case err != nil:
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		case ok:
			return func() { unlockFile(f); f.Close() }, nil
		}
		t.Reset(Poll)
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the lock %s: %w", path, ctx.Err())
		case <-t.C:
		}
	}
}
