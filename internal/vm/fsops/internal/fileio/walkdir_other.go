//go:build !linux

package fileio

import (
	"os"
	"sync/atomic"
)

// ListDir is os.ReadDir where there is no getdents: the entries sorted by name, and no
// handle (files are opened by path).
func ListDir(path string, _ []byte, _ *atomic.Int32, _ int32) ([]DirEntry, *Dir, error) {
	des, err := os.ReadDir(path)
	if err != nil {
		return nil, nil, err
	}
	out := make([]DirEntry, len(des))
	for i, d := range des {
		out[i] = DirEntry{Name: d.Name(), Type: d.Type()}
	}
	return out, nil, nil
}

func closeDirHandle(int) {}

func OpenInDir(*Dir, string) (int, error) {
	panic("fsops: no directory handles on this system")
}
