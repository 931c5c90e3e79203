package fileio

import (
	"os"

	"golang.org/x/sys/unix"
)

// reserve allocates the blocks for the first size bytes of f without changing its length
// (fallocate with FALLOC_FL_KEEP_SIZE), so that writing them cannot run out of room
// half-way. A file system without fallocate reports ENOTSUP/EOPNOTSUPP.
func reserve(f *os.File, size int64) error {
	for {
		err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, size)
		if err != unix.EINTR {
			return err
		}
	}
}
