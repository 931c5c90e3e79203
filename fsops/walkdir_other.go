//go:build !linux

package fsops

import (
	"os"
	"sync/atomic"
)

// listDir is os.ReadDir where there is no getdents: the entries sorted by name, and no
// handle (files are opened by path).
func listDir(path string, _ []byte, _ *atomic.Int32, _ int32) ([]dirEntry, *dirHandle, error) {
	des, err := os.ReadDir(path)
	if err != nil {
		return nil, nil, err
	}
	out := make([]dirEntry, len(des))
	for i, d := range des {
		out[i] = dirEntry{name: d.Name(), typ: d.Type()}
	}
	return out, nil, nil
}

func closeDirHandle(int) {}

func openInDir(*dirHandle, string) (int, error) {
	panic("fsops: no directory handles on this system")
}
