//go:build !unix

package lifecycle

import "errors"

// WatchdogLock is unsupported where there is no watchdog (no /bin/sh: Windows).
func WatchdogLock(int) error { return errors.ErrUnsupported }
