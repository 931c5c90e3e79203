//go:build linux

package fileio

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openUnnamed opens a new file in dir that has no name yet (O_TMPFILE), for writing.
func openUnnamed(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o666)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// nameUnnamed links f, opened by openUnnamed, at name, which must not exist. Linking by
// the descriptor's /proc path needs no privilege (AT_EMPTY_PATH would).
func nameUnnamed(f *os.File, name string) error {
	err := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), unix.AT_FDCWD, name, unix.AT_SYMLINK_FOLLOW)
	if errors.Is(err, unix.ENOENT) {
		// The /proc path is missing, not the directory (which O_TMPFILE opened).
		return fmt.Errorf("%w: %w", errNoName, err)
	}
	return err
}
