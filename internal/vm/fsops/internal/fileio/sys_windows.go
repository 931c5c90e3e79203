//go:build windows

package fileio

import (
	"errors"
	"os"
)

// The tools run in the Linux VM; on Windows fsops only builds (the host binary's
// platforms are vetted as a whole), with these stand-ins for the Unix calls.

const (
	AccessExists = 0
	AccessRead   = 4
	AccessWrite  = 2
)

// Access tells whether path exists and, for read or write, opens it so.
func Access(path string, mode uint32) error {
	if _, err := os.Stat(path); err != nil {
		return err
	}
	flag := -1
	switch {
	case mode&AccessWrite != 0 && mode&AccessRead != 0:
		flag = os.O_RDWR
	case mode&AccessWrite != 0:
		flag = os.O_WRONLY
	case mode&AccessRead != 0:
		flag = os.O_RDONLY
	}
	if flag < 0 {
		return nil
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return err
	}
	return f.Close()
}

func owner(os.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }

func linkCount(os.FileInfo) uint64 { return 1 }

func flockExclusive(*os.File) error { return errors.ErrUnsupported }

// flockRelease does nothing: no lock was taken.
func flockRelease(*os.File) {}
