package fileio

import (
	"os"
	"syscall"
)

// LockInode takes an exclusive flock(2) on the file abs names, so that edits and
// writes made by separate processes (the per-call `tool --local` transport runs one
// process per call) take turns like those inside one process do. The lock belongs to the inode, and a
// finished edit renames a new inode into place; so after locking, the path is checked to
// still name the locked inode, and the lock is taken again if it does not.
//
// It is best effort: a file that cannot be opened or locked (missing, no flock support on
// the file system) is edited without it, and the edit reports the real error itself.
// The returned function releases the lock.
func LockInode(abs string) func() {
	for attempt := 0; attempt < lockAttempts; attempt++ {
		// O_NONBLOCK: opening a FIFO must not wait for a writer.
		f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return func() {}
		}
		held, err := f.Stat()
		if err != nil || !held.Mode().IsRegular() {
			f.Close()
			return func() {}
		}
		if err := flockExclusive(f); err != nil {
			f.Close()
			return func() {}
		}
		if now, err := os.Stat(abs); err == nil && os.SameFile(held, now) {
			return func() {
				// The lock is released now and the descriptor closed aside: after a
				// replace it holds the last reference to the old inode, and freeing
				// that (ext4 does it in this close) need not delay the call.
				flockRelease(f)
				go f.Close()
			}
		}
		f.Close() // replaced while we waited: lock the new file
	}
	return func() {}
}

// lockAttempts bounds how often a lock is taken again on a file replaced meanwhile.
const lockAttempts = 100
