//go:build unix

package fileio

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// access(2) modes.
const (
	AccessExists = unix.F_OK
	AccessRead   = unix.R_OK
	AccessWrite  = unix.W_OK
)

// access is access(2): whether this process may use path so, by its real ids (as Node's
// fs.access, which pi calls).
func Access(path string, mode uint32) error { return unix.Access(path, mode) }

// owner is the file's user and group.
func owner(fi os.FileInfo) (uid, gid int, ok bool) {
	sys, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(sys.Uid), int(sys.Gid), true
}

// linkCount is the file's number of hard links (1 when unknown).
func linkCount(fi os.FileInfo) uint64 {
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Nlink)
	}
	return 1
}

// flockExclusive waits for an exclusive flock(2) on f.
// flockRelease releases a flock(2) taken with flockExclusive.
func flockRelease(f *os.File) {
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
}

func flockExclusive(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
