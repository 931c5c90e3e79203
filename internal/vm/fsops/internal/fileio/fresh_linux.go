//go:build linux

package fileio

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// fuseSuperMagic is statfs's f_type of FUSE file systems, virtiofs among them.
const fuseSuperMagic = 0x65735546

// OpenFresh opens abs for reading, as os.Open does, so that what is read is the file as
// it is now on the host that shares it. A workspace shared into a VM over virtiofs (a
// FUSE file system: a Mac's sbx) may be cached by the guest: attributes and directory
// entries for the cache's timeout, file pages across opens. A file the user's editor
// changed on the host can then read stale, and an edit of stale content written back
// would silently revert the user's change. On FUSE the file is therefore opened with
// O_DIRECT (reads go to the host, not the page cache) and its attributes are fetched
// from the host (statx AT_STATX_FORCE_SYNC), so its size is the host's too. Elsewhere
// (a local disk, a bind mount) there is no such cache and nothing changes.
func OpenFresh(abs string) (*os.File, error) {
	var fs unix.Statfs_t
	if unix.Statfs(abs, &fs) != nil || fs.Type != fuseSuperMagic {
		return os.Open(abs)
	}
	f, err := os.OpenFile(abs, os.O_RDONLY|unix.O_DIRECT, 0)
	if errors.Is(err, unix.EINVAL) {
		// A FUSE server that refuses direct I/O: the fresh attributes still bound
		// the staleness to what the page cache holds.
		f, err = os.Open(abs)
	}
	if err != nil {
		return nil, err
	}
	var stx unix.Statx_t
	_ = unix.Statx(int(f.Fd()), "", unix.AT_EMPTY_PATH|unix.AT_STATX_FORCE_SYNC, unix.STATX_BASIC_STATS, &stx)
	return f, nil
}
