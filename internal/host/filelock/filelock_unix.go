//go:build unix

package filelock

import (
	"os"

	"golang.org/x/sys/unix"
)

func tryLock(f *os.File) (bool, error) {
	switch err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err {
	case nil:
		return true, nil
	case unix.EWOULDBLOCK, unix.EINTR:
		return false, nil
	default:
		return false, err
	}
}

// unlockFile has nothing to do: closing the descriptor releases flock(2)'s lock.
func unlockFile(*os.File) {}
