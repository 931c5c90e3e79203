package fileio

import (
	"io/fs"
	"sync/atomic"
)

// DirEntry is one entry of a directory listing: its name and type bits.
type DirEntry struct {
	Name string
	Type fs.FileMode
}

// Dir is a directory kept open after it was listed, so that its files are opened
// relative to it (openat) instead of by absolute path: the kernel then looks up one
// name, not every component of the path again. It is closed when its last reference
// is released: the walk holds one until the directory's entries are visited, and a
// visitor that keeps an entry for later takes one of its own (acquire).
type Dir struct {
	fd   int
	refs atomic.Int32
	held *atomic.Int32 // the walk's count of open handles, which bounds them
}

func (h *Dir) Acquire() { h.refs.Add(1) }

func (h *Dir) Release() {
	if h.refs.Add(-1) == 0 {
		closeDirHandle(h.fd)
		h.held.Add(-1)
	}
}

// MaxDirHandles bounds the directories a walk keeps open (walk.Options.MaxDirHandles
// can lower it); past it a directory is closed once listed and its files are opened
// by path.
const MaxDirHandles = 256
