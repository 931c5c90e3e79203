package fsops

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// mkdirAll is fs.promises.mkdir(dir, {recursive: true}), Node's algorithm step by step
// so that every error is Node's, naming the directory whose step failed: a stack of
// paths; mkdir the top; on ENOENT push it back with its parent above it; EACCES, ENOSPC,
// ENOTDIR and EPERM end it; any other error (EEXIST) is judged by a stat — a directory
// is fine, a parent that is not one (a file, a dangling symlink) is ENOTDIR, the target
// itself EEXIST when it is no directory and the stat's own error (ENOENT for a dangling
// symlink) when there is nothing behind it.
func mkdirAll(dir string) error {
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
			return nodeErr(err, "mkdir", path)
		}
		st, serr := os.Stat(path)
		isDir := serr == nil && st.IsDir()
		switch {
		case err == syscall.EEXIST && len(stack) > 0 && isDir:
			continue
		case err == syscall.EEXIST && len(stack) > 0:
			return &NodeError{Code: "ENOTDIR", Syscall: "mkdir", Path: path, Err: syscall.ENOTDIR}
		case serr != nil:
			return nodeErr(errnoOf(serr), "mkdir", path)
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

// replaceFile writes the concatenated content to abs as fs.writeFile(abs, content) would
// — following a symlink to its target, keeping an existing file's mode and owner — but
// atomically: the bytes go to a temporary file in the same directory, which is renamed
// over the target, so a writer killed at any moment leaves the old file or the new one,
// never half of one. It is not synced: pi's write is not durable against a power loss
// either, and an fsync per call cost more than pi's whole write (1–5 ms). Targets
// that cannot be replaced that way without changing what pi's write means (devices and
// FIFOs, files with several hard links, which must all see the new content, a file we
// may write in a directory we may not, files with a setuid, setgid or sticky bit, which
// the kernel keeps or clears on a write by rules of its own) are written in place, as
// pi does.
func replaceFile(abs string, content ...string) error {
	return replaceFileWith(abs, func(f *os.File) error { return writeAll(f, content) })
}

// replaceFileWith is replaceFile with the content written by write, which returns
// write's Node-worded error.
func replaceFileWith(abs string, write func(*os.File) error) error {
	target := abs
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		target = real
	} else if fi, lerr := os.Lstat(abs); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
		// A dangling symlink: let open(2) create its target.
		return writeInPlace(abs, write)
	}
	st, err := os.Stat(target)
	exists := err == nil
	switch {
	case exists && st.IsDir():
		return &NodeError{Code: "EISDIR", Syscall: "open", Path: abs, Err: syscall.EISDIR}
	case exists && (!st.Mode().IsRegular() || hardLinked(st) || st.Mode()&specialBits != 0):
		return writeInPlace(abs, write)
	case exists:
		if err := access(target, accessWrite); err != nil {
			return nodeErr(err, "open", abs)
		}
	case !isNotExist(err):
		return nodeErr(err, "open", abs)
	}

	tmp, err := createTemp(filepath.Dir(target), filepath.Base(target))
	if err != nil {
		if exists && (errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)) {
			return writeInPlace(abs, write)
		}
		return nodeErr(err, "open", abs)
	}
	name := tmp.Name()
	if err := fillTemp(tmp, write, st, exists); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Rename(name, target); err != nil {
		os.Remove(name)
		return nodeErr(err, "rename", abs)
	}
	return nil
}

// specialBits are the mode bits a write in place may keep or clear (setuid and setgid are
// cleared by a writer without CAP_FSETID, setgid only with group execute) and that chmod
// may refuse to set: only writing in place keeps exactly what pi's write keeps.
const specialBits = os.ModeSetuid | os.ModeSetgid | os.ModeSticky

// Temporary files of an atomic replace are named "." + base + tempMark + 12 hex + ".tmp".
const tempMark = ".pi-sbx-"

// isOwnTemp reports whether name is the temporary file of an atomic replace in progress.
// grep, find and ls skip these: pi writes in place, so its listings never show them.
func isOwnTemp(name string) bool {
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

// createTemp makes a new, exclusive file next to the target. open(2) applies the umask to
// 0666, so a new file gets the mode fs.writeFile would give it.
func createTemp(dir, base string) (*os.File, error) {
	for i := 0; ; i++ {
		var rnd [6]byte
		if _, err := rand.Read(rnd[:]); err != nil {
			return nil, err
		}
		name := filepath.Join(dir, "."+base+tempMark+hex.EncodeToString(rnd[:])+".tmp")
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil || !errors.Is(err, os.ErrExist) || i == 10 {
			return f, err
		}
	}
}

// fillTemp writes the temporary file and gives it the old file's mode and owner.
func fillTemp(tmp *os.File, write func(*os.File) error, old os.FileInfo, exists bool) error {
	defer tmp.Close()
	if err := write(tmp); err != nil {
		return err
	}
	if exists {
		// Owner first: chown clears setuid and setgid, chmod after it cannot be undone.
		// (Files with those bits are written in place; this order is only the safe one.)
		if uid, gid, ok := owner(old); ok {
			// Best effort: only a privileged process may give the file away.
			_ = tmp.Chown(uid, gid)
		}
		if err := tmp.Chmod(old.Mode() & (os.ModePerm | specialBits)); err != nil {
			return nodeErr(err, "chmod", "")
		}
	}
	return tmp.Close()
}

// writeInPlace is plain fs.writeFile: truncate and write.
func writeInPlace(abs string, write func(*os.File) error) error {
	f, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return nodeErr(err, "open", abs)
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return nodeErr(err, "close", "")
	}
	return nil
}

// hardLinked reports whether the file has other names that a rename would detach.
func hardLinked(st os.FileInfo) bool {
	return linkCount(st) > 1
}

// writeAll writes the pieces in order; WriteString does not copy them.
func writeAll(f *os.File, pieces []string) error {
	for _, p := range pieces {
		if _, err := f.WriteString(p); err != nil {
			return nodeErr(err, "write", "")
		}
	}
	return nil
}
