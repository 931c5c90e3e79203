//go:build !linux

package fileio

import (
	"io/fs"
	"os"
)

// OpenFresh opens abs for reading (see the linux version: only a VM's FUSE share needs
// more than os.Open).
func OpenFresh(abs string) (*os.File, error) { return os.Open(abs) }

// freshen does nothing here (see the linux version).
func freshen(*os.File) {}

// StatFile is the size and type of an open file (see the linux version).
func StatFile(f *os.File) (size int64, typ fs.FileMode, err error) {
	st, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	return st.Size(), st.Mode().Type(), nil
}

// OnShare reports false: only Linux VMs have a workspace share (see the linux version).
func OnShare(string) bool { return false }
