//go:build !linux

package fileio

import "os"

// OpenFresh opens abs for reading (see the linux version: only a VM's FUSE share needs
// more than os.Open).
func OpenFresh(abs string) (*os.File, error) { return os.Open(abs) }
