package fileio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrAborted is what pi's file tools throw when their call is cancelled.
var ErrAborted = errors.New("Operation aborted")

// NodeError is a file-system failure worded as Node.js words it, because pi throws Node's
// errors unchanged and the model sees their message: "ENOENT: no such file or directory,
// access '/abs/path'". Path is empty for calls on a file descriptor (read, write).
type NodeError struct {
	Code    string // "ENOENT"
	Syscall string // "access", "open", "read", "mkdir"
	Path    string
	Err     error // the underlying Go error
}

// Error renders the error as Node does: "CODE: description, syscall 'path'".
func (e *NodeError) Error() string {
	desc := uvDescriptions[e.Code]
	if desc == "" && e.Err != nil {
		desc = e.Err.Error()
	}
	if e.Path == "" {
		return fmt.Sprintf("%s: %s, %s", e.Code, desc, e.Syscall)
	}
	return fmt.Sprintf("%s: %s, %s '%s'", e.Code, desc, e.Syscall, e.Path)
}

// Unwrap returns the underlying Go error, so errors.Is(err, fs.ErrNotExist) works.
func (e *NodeError) Unwrap() error { return e.Err }

// uvDescriptions are libuv's uv_strerror texts, which Node puts in its messages.
var uvDescriptions = map[string]string{
	"ENOENT":       "no such file or directory",
	"EACCES":       "permission denied",
	"EPERM":        "operation not permitted",
	"EISDIR":       "illegal operation on a directory",
	"ENOTDIR":      "not a directory",
	"EEXIST":       "file already exists",
	"ELOOP":        "too many symbolic links encountered",
	"ENAMETOOLONG": "name too long",
	"EROFS":        "read-only file system",
	"ENOSPC":       "no space left on device",
	"EBUSY":        "resource busy or locked",
	"EINVAL":       "invalid argument",
	"EMFILE":       "too many open files",
	"ENFILE":       "file table overflow",
	"EIO":          "i/o error",
	"EXDEV":        "cross-device link not permitted",
	"ETXTBSY":      "text file is busy",
	"EFBIG":        "file too large",
	"EDQUOT":       "disk quota exceeded",
	"EAGAIN":       "resource temporarily unavailable",
}

// errnoNames maps the errnos above to their symbolic names.
var errnoNames = map[syscall.Errno]string{
	syscall.ENOENT: "ENOENT", syscall.EACCES: "EACCES", syscall.EPERM: "EPERM",
	syscall.EISDIR: "EISDIR", syscall.ENOTDIR: "ENOTDIR", syscall.EEXIST: "EEXIST",
	syscall.ELOOP: "ELOOP", syscall.ENAMETOOLONG: "ENAMETOOLONG", syscall.EROFS: "EROFS",
	syscall.ENOSPC: "ENOSPC", syscall.EBUSY: "EBUSY", syscall.EINVAL: "EINVAL",
	syscall.EMFILE: "EMFILE", syscall.ENFILE: "ENFILE", syscall.EIO: "EIO",
	syscall.EXDEV: "EXDEV", syscall.ETXTBSY: "ETXTBSY", syscall.EFBIG: "EFBIG",
	syscall.EDQUOT: "EDQUOT", syscall.EAGAIN: "EAGAIN",
}

// NodeErr converts err from a file-system call into a NodeError for syscall on path
// (path "" for descriptor calls). Errors without an errno are returned unchanged.
func NodeErr(err error, syscallName, path string) error {
	if err == nil {
		return nil
	}
	var ne *NodeError
	if errors.As(err, &ne) {
		return err
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err
	}
	code, ok := errnoNames[errno]
	if !ok {
		return err
	}
	return &NodeError{Code: code, Syscall: syscallName, Path: path, Err: err}
}

// ErrCode returns the Node error code of err ("ENOENT"), or "" if it has none.
func ErrCode(err error) string {
	var ne *NodeError
	if errors.As(err, &ne) {
		return ne.Code
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errnoNames[errno]
	}
	return ""
}

// IsNotExist reports whether err means the path is missing (ENOENT or ENOTDIR), which is
// how pi's mutation queue decides to fall back to the resolved path.
func IsNotExist(err error) bool {
	c := ErrCode(err)
	return c == "ENOENT" || c == "ENOTDIR" || errors.Is(err, fs.ErrNotExist)
}

// MaxReadFileSize is Node's kIoMaxLength: fs.readFile refuses larger files.
const MaxReadFileSize = 1<<31 - 1

// FileTooLarge is Node's ERR_FS_FILE_TOO_LARGE message.
func FileTooLarge(size int64) error {
	return fmt.Errorf("File size (%d) is greater than 2 GiB", size)
}

// ReadFile reads a whole file as Node's fs.readFile does, with its errors: open
// failures name the path, read failures (EISDIR for a directory) do not, and files over
// 2 GiB are refused before anything is read. A file that is not a regular one (no size:
// a device, FIFO or socket) is read up to StreamCap bytes and refused with a
// *StreamTooLongError when it goes on, where Node would read until memory runs out.
// It reads around a VM share's cache (OpenFresh): edit rewrites what it read.
func ReadFile(abs string) ([]byte, error) {
	f, err := OpenFresh(abs) // the host's file now, not a share's cached copy
	if err != nil {
		return nil, NodeErr(err, "open", abs)
	}
	defer f.Close()
	return readOpen(f, abs)
}

// ReadFileLocked is ReadFile under LockInode's lock on abs, held until unlock is
// called (after the caller has written the file back). The lock is taken on the
// descriptor the file is read through: one open instead of LockInode's and ReadFile's,
// each a round trip over a shared workspace. The file is read around a share's cache
// (OpenFresh) only once locked, so that what is read is what a writer that held the
// lock left. On an error unlock is nil.
func ReadFileLocked(abs string) (data []byte, unlock func(), err error) {
	for attempt := 0; ; attempt++ {
		f, err := os.Open(abs)
		if err != nil {
			return nil, nil, NodeErr(err, "open", abs)
		}
		unlock = func() { f.Close() }
		if held, err := f.Stat(); err == nil && held.Mode().IsRegular() && flockExclusive(f) == nil {
			if now, err := os.Stat(abs); err != nil || !os.SameFile(held, now) {
				f.Close() // replaced while we waited: lock the new file
				if attempt < lockAttempts {
					continue
				}
				data, err := ReadFile(abs) // as LockInode gives up: unlocked
				if err != nil {
					return nil, nil, err
				}
				return data, func() {}, nil
			}
			unlock = func() {
				// Released now, the descriptor closed aside (see LockInode).
				flockRelease(f)
				go f.Close()
			}
		}
		freshen(f) // the host's file now, not a share's cached copy
		data, err := readOpen(f, abs)
		if err != nil {
			unlock()
			return nil, nil, err
		}
		return data, unlock, nil
	}
}

// readOpen is ReadFile's reading of f, open on abs.
func readOpen(f *os.File, abs string) ([]byte, error) {
	var size int64
	var r io.Reader = f
	capped := false
	if sz, typ, err := StatFile(f); err == nil {
		switch {
		case typ.IsRegular():
			if sz > MaxReadFileSize {
				return nil, FileTooLarge(sz)
			}
			size = sz
		case !typ.IsDir(): // a directory fails its first read with EISDIR, as in Node
			// Room for all it may read at once; untouched memory costs nothing.
			r, capped, size = io.LimitReader(f, StreamCap+1), true, StreamCap+1
		}
	}
	// Sized up front, so a large file is not copied through a doubling buffer.
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, NodeErr(err, "read", "")
	}
	if capped && buf.Len() > StreamCap {
		return nil, &StreamTooLongError{Path: abs}
	}
	return buf.Bytes(), nil
}
