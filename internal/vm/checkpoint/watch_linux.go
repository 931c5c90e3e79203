package checkpoint

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Watch tracks, through inotify, which paths of a work tree changed since it was last
// asked: a checkpoint after a command then looks at those alone instead of every file.
// The kernel queues an event before the call that caused it returns, so what a finished
// command did is always in the queue that Changed reads. Where it loses track (the
// queue overflowed, a directory moved, no watch left) the next checkpoint looks at all
// of the tree, and tracking goes on.
type Watch struct {
	root  string
	fd    int
	dirs  map[int32]string // watch descriptor -> directory
	dirty map[string]bool  // absolute paths changed since the last Changed
	all   bool             // lost track since the last Changed
	dead  bool             // no watches at all any more: always all
}

// maxDirty is how many changed paths a checkpoint looks at one by one; more, and git's
// own walk of the tree is cheaper.
const maxDirty = 1000

const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_MOVED_FROM |
	unix.IN_MOVED_TO | unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

// NewWatch starts watching every directory under root but .git ones.
func NewWatch(root string) (*Watch, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, &os.SyscallError{Syscall: "inotify_init1", Err: err}
	}
	w := &Watch{root: filepath.Clean(root), fd: fd, dirs: map[int32]string{}, dirty: map[string]bool{}}
	if err := w.addTree(w.root, false); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// Close ends the watch.
func (w *Watch) Close() {
	if w.fd >= 0 {
		_ = unix.Close(w.fd)
		w.fd = -1
	}
}

// Changed is the paths changed since the last call (absolute; files, and files that
// went), or all when it lost track.
func (w *Watch) Changed() (paths []string, all bool) {
	w.drain()
	all = w.all || w.dead || len(w.dirty) > maxDirty
	if !all {
		for p := range w.dirty {
			paths = append(paths, p)
		}
	}
	w.all, w.dirty = false, map[string]bool{}
	return paths, all
}

// Lose makes the next Changed say all: what the last one named was not taken.
func (w *Watch) Lose() { w.all = true }

func (w *Watch) changed(context.Context, Journal, string) ([]string, bool) { return w.Changed() }
func (w *Watch) lose()                                                     { w.Lose() }

// drain reads every queued event.
func (w *Watch) drain() {
	var buf [64 << 10]byte
	for w.fd >= 0 {
		n, err := unix.Read(w.fd, buf[:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n <= 0 { // EAGAIN: nothing more queued
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			nameBytes := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			off += unix.SizeofInotifyEvent + int(ev.Len)
			name := string(nameBytes)
			for len(name) > 0 && name[len(name)-1] == 0 {
				name = name[:len(name)-1]
			}
			w.event(ev.Wd, ev.Mask, name)
		}
	}
}

func (w *Watch) event(wd int32, mask uint32, name string) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		w.all = true
		return
	}
	dir, ok := w.dirs[wd]
	if mask&unix.IN_IGNORED != 0 {
		delete(w.dirs, wd)
		if len(w.dirs) == 0 {
			w.dead = true
		}
		return
	}
	if !ok {
		return
	}
	if name == "" { // the directory itself
		if mask&unix.IN_MOVE_SELF != 0 || (mask&unix.IN_DELETE_SELF != 0 && dir == w.root) {
			w.all = true
		}
		return
	}
	if name == ".git" {
		return
	}
	p := filepath.Join(dir, name)
	if mask&unix.IN_ISDIR == 0 {
		w.dirty[p] = true
		return
	}
	switch {
	case mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
		if err := w.addTree(p, true); err != nil {
			w.all = true
		}
	case mask&unix.IN_MOVED_FROM != 0:
		w.all = true // what was in it is not known here
	}
}

// addTree watches dir and every directory under it (but .git ones); with files, it
// marks each file under it changed (a new directory: what was made in it before its
// watch was added sent no event).
func (w *Watch) addTree(dir string, files bool) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p != dir {
				return nil // gone meanwhile: its removal is an event of its parent's
			}
			return err
		}
		if !d.IsDir() {
			if files {
				w.dirty[p] = true
			}
			return nil
		}
		if d.Name() == ".git" && p != w.root {
			return filepath.SkipDir
		}
		// Watched before it is read: a file made after the walk passed is an event.
		wd, err := unix.InotifyAddWatch(w.fd, p, watchMask)
		if err != nil {
			return &os.SyscallError{Syscall: "inotify_add_watch", Err: err}
		}
		w.dirs[int32(wd)] = p
		return nil
	})
}
