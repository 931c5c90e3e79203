package fileio

import (
	"bytes"
	"encoding/binary"
	"io/fs"
	"slices"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// ListDir reads directory path with getdents into buf (reused across calls): its
// entries sorted by name, and the directory kept open as a handle when fewer than
// limit are (held counts them), else nil. Unlike os.ReadDir it allocates no
// DirEntry per entry and sorts plain structs, which is most of a listing's cost in
// user space.
func ListDir(path string, buf []byte, held *atomic.Int32, limit int32) ([]DirEntry, *Dir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	for err == unix.EINTR {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var out []DirEntry
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			unix.Close(fd)
			return nil, nil, &fs.PathError{Op: "readdirent", Path: path, Err: err}
		}
		if n <= 0 {
			break
		}
		out = appendDirents(out, fd, buf[:n])
	}
	slices.SortFunc(out, func(a, b DirEntry) int { return strings.Compare(a.Name, b.Name) })
	if held.Add(1) > limit {
		held.Add(-1)
		unix.Close(fd)
		return out, nil, nil
	}
	h := &Dir{fd: fd, held: held}
	h.refs.Store(1)
	return out, h, nil
}

// appendDirents decodes linux_dirent64 records (inode, offset, record length, type,
// NUL-terminated name), skipping "." and "..". An entry of unknown type (a file system
// without types in its directories) is typed by lstat, and dropped if that fails, as
// os.ReadDir does.
func appendDirents(out []DirEntry, fd int, b []byte) []DirEntry {
	for len(b) >= 19 {
		reclen := int(binary.NativeEndian.Uint16(b[16:]))
		if reclen < 19 || reclen > len(b) {
			break
		}
		rec := b[:reclen]
		b = b[reclen:]
		name := rec[19:]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if string(name) == "." || string(name) == ".." {
			continue
		}
		e := DirEntry{Name: string(name)}
		switch rec[18] {
		case unix.DT_REG:
		case unix.DT_DIR:
			e.Type = fs.ModeDir
		case unix.DT_LNK:
			e.Type = fs.ModeSymlink
		case unix.DT_FIFO:
			e.Type = fs.ModeNamedPipe
		case unix.DT_SOCK:
			e.Type = fs.ModeSocket
		case unix.DT_CHR:
			e.Type = fs.ModeDevice | fs.ModeCharDevice
		case unix.DT_BLK:
			e.Type = fs.ModeDevice
		default:
			var st unix.Stat_t
			if unix.Fstatat(fd, e.Name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
				continue
			}
			e.Type = statType(st.Mode)
		}
		out = append(out, e)
	}
	return out
}

func statType(mode uint32) fs.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return 0
}

func closeDirHandle(fd int) { unix.Close(fd) }

// OpenInDir opens name in the directory h for reading.
func OpenInDir(h *Dir, name string) (int, error) {
	for {
		fd, err := unix.Openat(h.fd, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}
