package fileio

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// MkdirAll is fs.promises.mkdir(dir, {recursive: true}), Node's algorithm step by step
// so that every error is Node's, naming the directory whose step failed: a stack of
// paths; mkdir the top; on ENOENT push it back with its parent above it; EACCES, ENOSPC,
// ENOTDIR and EPERM end it; any other error (EEXIST) is judged by a stat — a directory
// is fine, a parent that is not one (a file, a dangling symlink) is ENOTDIR, the target
// itself EEXIST when it is no directory and the stat's own error (ENOENT for a dangling
// symlink) when there is nothing behind it.
//
// A directory that is there already ends it at once, as Node's first mkdir (EEXIST) and
// stat would: asked by stat, not by mkdir, because over a shared workspace mkdir of a
// name the kernel has cached still asks the host (FUSE revalidates an exclusive create's
// lookup) while stat is answered from the cache.
func MkdirAll(dir string) error {
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return nil
	}
	stack := []string{dir}
	for len(stack) > 0 {
		path := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		err := errnoOf(os.Mkdir(path, 0o777))
		if err == syscall.ENOENT {
			parent := path
			if i := strings.LastIndexByte(path, '/'); i >= 0 {
				parent = path[:i]
			}
			if parent != path {
				stack = append(stack, path, parent)
				continue
			}
			if len(stack) > 0 {
				continue
			}
			err = syscall.EEXIST
		}
		switch err {
		case nil:
			continue
		case syscall.EACCES, syscall.ENOSPC, syscall.ENOTDIR, syscall.EPERM:
			return NodeErr(err, "mkdir", path)
		}
		st, serr := os.Stat(path)
		isDir := serr == nil && st.IsDir()
		switch {
		case err == syscall.EEXIST && len(stack) > 0 && isDir:
			continue
		case err == syscall.EEXIST && len(stack) > 0:
			return &NodeError{Code: "ENOTDIR", Syscall: "mkdir", Path: path, Err: syscall.ENOTDIR}
		case serr != nil:
			return NodeErr(errnoOf(serr), "mkdir", path)
		case !isDir:
			return &NodeError{Code: "EEXIST", Syscall: "mkdir", Path: path, Err: syscall.EEXIST}
		}
		return nil // Node ends here, the rest of the stack untried
	}
	return nil
}

// errnoOf is err's errno, or err itself when it carries none.
func errnoOf(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}

// ReplaceMin is the size from which WriteFile replaces a file instead of rewriting it in
// place. Below it a write takes well under a millisecond, so the moment a kill could cut
// it is short, and pi's in-place rewrite is kept exactly: the same inode, so hard links,
// bind mounts (a container in the sandbox that mounts the file sees the new content),
// open descriptors, extended attributes, ACLs and every mode bit stay as pi leaves them,
// at pi's cost (a new inode per write costs ext4 more the more recently others were
// freed). From it on, a write takes long enough for a kill to land mid-way, and what
// it would lose is large, so it is replaced atomically.
const ReplaceMin = 1 << 20

// WriteFile writes size bytes, produced by write, to abs as fs.WriteFile(abs, content)
// does — following a symlink, keeping an existing file's inode, mode and owner: in
// place (writeInPlace) below ReplaceMin bytes, and atomically (replaceFile) from it on.
// write returns its Node-worded error.
//
// A full disk never leaves the file worse than pi's write would (pi truncates it to
// zero, then fails): room for the content is reserved before anything in place is
// overwritten, so a write that cannot fit fails with ENOSPC and leaves the old content;
// and a replace that finds no room for its second copy is done in place instead, which
// succeeds wherever pi's does.
func WriteFile(abs string, size int, write func(io.Writer) error) error {
	if size < ReplaceMin {
		return writeInPlace(abs, size, write, false)
	}
	err := replaceFile(abs, size, write)
	if isNoSpace(err) {
		return writeInPlace(abs, size, write, false)
	}
	return err
}

// isNoSpace reports whether err is the file system being full (or the quota reached).
func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// WritePieces is WriteFile of the pieces' concatenation.
func WritePieces(abs string, pieces ...string) error {
	size := 0
	for _, p := range pieces {
		size += len(p)
	}
	return WriteFile(abs, size, func(w io.Writer) error { return writeAll(w, pieces) })
}

// replaceFile writes what write produces to abs as fs.WriteFile would, but atomically:
// the bytes go to a temporary file in the same directory, which is renamed over the
// target, so a writer killed at any moment leaves the old file or the new one, never
// half of one, and a reader sees one or the other whole. It is not synced: pi's write is
// not durable against a power loss either, and an fsync per call costs more than pi's
// whole write. Targets that cannot be replaced that way without changing what
// pi's write means (devices and FIFOs, files with several hard links, which must all see
// the new content, a file we may write in a directory we may not, files with a setuid,
// setgid or sticky bit, which the kernel keeps or clears on a write by rules of its own)
// are written in place, as pi does.
func replaceFile(abs string, size int, write func(io.Writer) error) error {
	target := abs
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		target = real
	} else if fi, lerr := os.Lstat(abs); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
		// A dangling symlink: let open(2) create its target.
		return writeInPlace(abs, size, write, false)
	}
	st, err := os.Stat(target)
	exists := err == nil
	switch {
	case exists && st.IsDir():
		return &NodeError{Code: "EISDIR", Syscall: "open", Path: abs, Err: syscall.EISDIR}
	case exists && (!st.Mode().IsRegular() || hardLinked(st) || st.Mode()&SpecialBits != 0):
		return writeInPlace(abs, size, write, false)
	case exists:
		if err := Access(target, AccessWrite); err != nil {
			return NodeErr(err, "open", abs)
		}
	case !IsNotExist(err):
		return NodeErr(err, "open", abs)
	}

	dir, base := filepath.Dir(target), filepath.Base(target)
	// First as a file without a name, named only once written: a writer killed before
	// then leaves nothing behind (the kernel frees it), where a named temporary file
	// would stay.
	if tmp, err := openUnnamed(dir); err == nil {
		err := fillTemp(tmp, size, write, st, exists)
		var name string
		if err == nil {
			name, err = nameTemp(dir, base, func(name string) error { return nameUnnamed(tmp, name) })
		}
		if cerr := tmp.Close(); err == nil && cerr != nil {
			os.Remove(name)
			return NodeErr(cerr, "close", "")
		}
		if err == nil {
			return renameTemp(name, target, abs)
		}
		if !errors.Is(err, errNoName) {
			return err
		}
		// Not nameable here (no /proc): written again, the usual way.
	}
	var tmp *os.File
	name, err := nameTemp(dir, base, func(name string) (err error) {
		tmp, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		return err
	})
	if err != nil {
		if exists && (errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)) {
			return writeInPlace(abs, size, write, false)
		}
		return NodeErr(err, "open", abs)
	}
	err = fillTemp(tmp, size, write, st, exists)
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = NodeErr(cerr, "close", "")
	}
	if err != nil {
		os.Remove(name)
		return err
	}
	return renameTemp(name, target, abs)
}

// renameTemp moves the written temporary file over the target.
func renameTemp(name, target, abs string) error {
	if err := os.Rename(name, target); err != nil {
		os.Remove(name)
		return NodeErr(err, "rename", abs)
	}
	return nil
}

// SpecialBits are the mode bits a write in place may keep or clear (setuid and setgid are
// cleared by a writer without CAP_FSETID, setgid only with group execute) and that chmod
// may refuse to set: only writing in place keeps exactly what pi's write keeps.
const SpecialBits = os.ModeSetuid | os.ModeSetgid | os.ModeSticky

// Temporary files of an atomic replace are named "." + base + tempMark + 12 hex + ".tmp".
const tempMark = ".pi-sbx-"

// IsOwnTemp reports whether name is the temporary file of an atomic replace in progress.
// grep, find and ls skip these: pi writes in place, so its listings never show them.
func IsOwnTemp(name string) bool {
	if len(name) < len(tempMark)+12+len(".tmp")+2 || name[0] != '.' || !strings.HasSuffix(name, ".tmp") {
		return false
	}
	i := len(name) - len(".tmp") - 12 - len(tempMark)
	if name[i:i+len(tempMark)] != tempMark {
		return false
	}
	_, err := hex.DecodeString(name[i+len(tempMark) : len(name)-len(".tmp")])
	return err == nil
}

// nameTemp gives a temporary file next to the target a fresh name, by create (which
// fails with EEXIST when the name is taken), and returns the name. open(2) applies the
// umask to 0666, so a new file gets the mode fs.WriteFile would give it.
func nameTemp(dir, base string, create func(name string) error) (string, error) {
	for i := 0; ; i++ {
		var rnd [6]byte
		if _, err := rand.Read(rnd[:]); err != nil {
			return "", err
		}
		name := filepath.Join(dir, "."+base+tempMark+hex.EncodeToString(rnd[:])+".tmp")
		err := create(name)
		if err == nil || !errors.Is(err, os.ErrExist) || i == 10 {
			return name, err
		}
	}
}

// fillTemp writes the temporary file and gives it the old file's mode and owner.
func fillTemp(tmp *os.File, size int, write func(io.Writer) error, old os.FileInfo, exists bool) error {
	if err := writeBuffered(tmp, size, write); err != nil {
		return err
	}
	if exists {
		// Owner first: chown clears setuid and setgid, chmod after it cannot be undone.
		// (Files with those bits are written in place; this order is only the safe one.)
		if uid, gid, ok := owner(old); ok {
			// Best effort: only a privileged process may give the file away.
			_ = tmp.Chown(uid, gid)
		}
		if err := tmp.Chmod(old.Mode() & (os.ModePerm | SpecialBits)); err != nil {
			return NodeErr(err, "chmod", "")
		}
	}
	return nil
}

// writeInPlace rewrites the file in place as fs.WriteFile does, but without its truncation
// to zero first: the content is written over the old from the start, and the file cut to
// the content's length after. The file ends as pi's write leaves it, but ext4 neither
// frees and allocates the blocks again (and, mounted with discard, discards them), nor
// flushes the file on close as it does after a truncation to zero (auto_da_alloc), and a
// reader never finds the file empty. Those cost more than the rest of a small write.
//
// Room for the size bytes to come is reserved first: without it, a full disk would stop
// the write half-way through, the new content's start over the old content's end.
// With it, the file is left as it was and the write fails as pi's does (ENOSPC), where
// pi's leaves the file empty.
//
// With lock, the descriptor written through also holds LockInode's lock, taken once it
// is open (the lock goes with its close, after the last byte is written): one open
// instead of LockInode's and this one, each a round trip over a shared workspace.
func writeInPlace(abs string, size int, write func(io.Writer) error, lock bool) error {
	f, err := openLockedForWrite(abs, lock)
	if err != nil {
		return err
	}
	// The attributes the kernel holds (StatFile), not asked of the host again: over a
	// share with its cache off each fstat is a round trip, and a stale size here only
	// misjudges the room to reserve. The length to cut below is asked of the host (a
	// write invalidates the cached size): the host's editor may have grown the file.
	if oldSize, typ, err := StatFile(f); err == nil && typ.IsRegular() && int64(size) > oldSize {
		if err := reserve(f, int64(size)); isNoSpace(err) {
			f.Close()
			return NodeErr(err, "write", "")
		}
	}
	w := countingWriter{f: f}
	if err := writeBuffered(&w, size, write); err != nil {
		f.Close()
		return err
	}
	// Only a regular file has a length to cut; a FIFO or a device ignores O_TRUNC.
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > w.n {
		if err := f.Truncate(w.n); err != nil {
			f.Close()
			return NodeErr(err, "ftruncate", "")
		}
	}
	if err := f.Close(); err != nil {
		return NodeErr(err, "close", "")
	}
	return nil
}

// WritePiecesLocked is WritePieces under LockInode's lock on abs, held until the file
// is written.
func WritePiecesLocked(abs string, pieces ...string) error {
	size := 0
	for _, p := range pieces {
		size += len(p)
	}
	write := func(w io.Writer) error { return writeAll(w, pieces) }
	if size >= ReplaceMin {
		defer LockInode(abs)()
		return WriteFile(abs, size, write)
	}
	return writeInPlace(abs, size, write, true)
}

// openLockedForWrite opens abs to be written in place and, with lock, takes LockInode's
// exclusive flock on it: as LockInode, best effort (a file that is not a regular one or
// cannot be locked is written unlocked), and a file replaced while the lock was awaited
// (an edit by another process renames a new inode into place) is opened again.
func openLockedForWrite(abs string, lock bool) (*os.File, error) {
	for attempt := 0; ; attempt++ {
		f, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE, 0o666)
		if err != nil {
			return nil, NodeErr(err, "open", abs)
		}
		if !lock || attempt == lockAttempts {
			return f, nil
		}
		held, err := f.Stat()
		if err != nil || !held.Mode().IsRegular() || flockExclusive(f) != nil {
			return f, nil
		}
		if now, err := os.Stat(abs); err == nil && os.SameFile(held, now) {
			return f, nil
		}
		f.Close() // replaced while we waited: lock the new file
	}
}

// writeBufMax bounds the buffer writeBuffered gathers the content in.
const writeBufMax = 1 << 20

// writeBuffered runs write into w through a buffer of the content's size (up to
// writeBufMax), so that content produced in pieces (an edit's unchanged stretches and
// replacements) reaches the file in one write(2). Over a shared workspace each write(2)
// is a round trip to the host, and the kernel asks the host once more per write(2)
// whether the file has privileges to drop (a getxattr): an edit written in three
// pieces cost six round trips where one write costs two.
func writeBuffered(w io.Writer, size int, write func(io.Writer) error) error {
	bw := bufio.NewWriterSize(w, min(max(size, 1), writeBufMax))
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return NodeErr(err, "write", "")
	}
	return nil
}

// countingWriter writes to f and counts the bytes written; WriteString does not copy.
type countingWriter struct {
	f *os.File
	n int64
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.n += int64(n)
	return n, err
}

func (w *countingWriter) WriteString(s string) (int, error) {
	n, err := w.f.WriteString(s)
	w.n += int64(n)
	return n, err
}

// hardLinked reports whether the file has other names that a rename would detach.
func hardLinked(st os.FileInfo) bool {
	return linkCount(st) > 1
}

// writeAll writes the pieces in order; a file's WriteString does not copy them.
func writeAll(w io.Writer, pieces []string) error {
	for _, p := range pieces {
		if _, err := io.WriteString(w, p); err != nil {
			return NodeErr(err, "write", "")
		}
	}
	return nil
}

// errNoName: a file opened without a name cannot be given one here.
var errNoName = errors.New("cannot name an unnamed file")
