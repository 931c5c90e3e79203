//go:build linux

package fileio

import (
	"bytes"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// fuseSuperMagic is statfs's f_type of FUSE file systems, virtiofs among them.
const fuseSuperMagic = 0x65735546

// OpenFresh opens abs for reading, as os.Open does, so that what is read is the file as
// it is now on the host that shares it. A workspace shared into a VM over virtiofs (a
// FUSE file system: a Mac's sbx) may be cached by the guest: attributes and directory
// entries for the cache's timeout, file pages across opens. A file the user's editor
// changed on the host can then read stale, and an edit of stale content written back
// would silently revert the user's change. On FUSE the file is therefore switched to
// O_DIRECT (reads go to the host, not the page cache) and its attributes are fetched
// from the host (statx AT_STATX_FORCE_SYNC), so its size is the host's too. Elsewhere
// (a local disk, a bind mount) there is no such cache and nothing changes.
//
// The file system is asked about the open file (fstatfs) and O_DIRECT set on it
// (fcntl), not by path: over a share with its cache off each path resolution costs a
// lookup and a getattr per component, round trips that one open already paid.
func OpenFresh(abs string) (*os.File, error) {
	f, err := os.Open(abs)
	if err != nil {
		return nil, err
	}
	freshen(f)
	return f, nil
}

// freshen makes what is read from f, open for reading, the file as it is now on the
// host that shares it (see OpenFresh).
func freshen(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		if !onFUSE(int(fd)) {
			return
		}
		// A file system without direct I/O refuses the flag (EINVAL): the fresh
		// attributes still bound the staleness to what the page cache holds.
		if fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0); err == nil {
			_, _ = unix.FcntlInt(fd, unix.F_SETFL, fl|unix.O_DIRECT)
		}
		var stx unix.Statx_t
		_ = unix.Statx(int(fd), "", unix.AT_EMPTY_PATH|unix.AT_STATX_FORCE_SYNC, unix.STATX_BASIC_STATS, &stx)
	})
}

// StatFile is the size and type of an open file from the attributes the kernel holds
// (statx AT_STATX_DONT_SYNC): right after OpenFresh they are the host's, and over a
// share with its cache off fstat would ask the host for them again.
func StatFile(f *os.File) (size int64, typ fs.FileMode, err error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var stx unix.Statx_t
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.Statx(int(fd), "", unix.AT_EMPTY_PATH|unix.AT_STATX_DONT_SYNC, unix.STATX_TYPE|unix.STATX_SIZE, &stx)
	}); err != nil {
		return 0, 0, err
	}
	if serr != nil {
		return 0, 0, &os.PathError{Op: "statx", Path: f.Name(), Err: serr}
	}
	return int64(stx.Size), statType(uint32(stx.Mode)), nil
}

// onFUSE reports whether the open file fd is on a FUSE file system, without asking the
// file system: fstatfs over a share is a round trip to the host, one more per file read.
// A file system on a block device (ext4 on a Linux host's disk: major number not 0)
// is none; for the others (FUSE's are among them) the mount table, which the kernel
// answers itself, names the type of the file system with that device number. fstatfs
// is the fallback when the table cannot say.
func onFUSE(fd int) bool {
	var stx unix.Statx_t
	if unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_STATX_DONT_SYNC, unix.STATX_TYPE, &stx) == nil {
		if stx.Dev_major != 0 {
			return false
		}
		if typ, ok := mountType(stx.Dev_major, stx.Dev_minor); ok {
			return typ == "fuse" || typ == "virtiofs" || strings.HasPrefix(typ, "fuse.")
		}
	}
	var fs unix.Statfs_t
	return unix.Fstatfs(fd, &fs) == nil && fs.Type == fuseSuperMagic
}

// mountType is the file system type /proc/self/mountinfo gives the mount of device
// major:minor ("id parent major:minor root point options [tags] - type source …").
func mountType(major, minor uint32) (string, bool) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", false
	}
	dev := strconv.FormatUint(uint64(major), 10) + ":" + strconv.FormatUint(uint64(minor), 10)
	field := []byte(" " + dev + " ")
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if !bytes.Contains(line, field) {
			continue
		}
		f := strings.Fields(string(line))
		if len(f) < 3 || f[2] != dev {
			continue
		}
		for i, w := range f {
			if w == "-" && i+1 < len(f) {
				return f[i+1], true
			}
		}
	}
	return "", false
}

// OnShare reports whether path is on a FUSE file system: a VM's workspace share
// (virtiofs). There each open, read and directory listing is a round trip to the host,
// so the tools keep more of them in flight than they have CPUs.
func OnShare(path string) bool {
	var fs unix.Statfs_t
	return unix.Statfs(path, &fs) == nil && fs.Type == fuseSuperMagic
}
