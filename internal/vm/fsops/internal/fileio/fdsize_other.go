//go:build unix && !linux

package fileio

import "syscall"

// FdSize is the size of the file open at fd, and whether it is a regular file (see the
// linux version).
func FdSize(fd int) (size int64, regular bool) {
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil {
		return -1, false
	}
	return st.Size, st.Mode&syscall.S_IFMT == syscall.S_IFREG
}
