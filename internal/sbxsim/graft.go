//go:build linux

package sbxsim

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// graftFile makes the file open as srcFd appear, read-only, at target inside a read-only
// tree, keeping the rest of that tree as it was. A target that exists is simply covered;
// otherwise its deepest existing ancestor directory is replaced by a tmpfs holding
// read-only binds of that directory's entries, the missing directories, and the file —
// then that tmpfs is made read-only too. It runs in the sandbox's mount namespace, before
// the directory is covered, so the host's entries are opened first.
func graftFile(srcFd int, target string) error {
	if fi, err := os.Lstat(target); err == nil && fi.Mode().IsRegular() {
		return bindFd(srcFd, target, true)
	}
	anchor := filepath.Dir(target)
	for {
		fi, err := os.Lstat(anchor)
		if err == nil && fi.IsDir() {
			break
		}
		if err == nil || !errors.Is(err, os.ErrNotExist) || anchor == "/" {
			return fmt.Errorf("grafting %s: %s is not a directory", target, anchor)
		}
		anchor = filepath.Dir(anchor)
	}
	fi, err := os.Stat(anchor)
	if err != nil {
		return err
	}
	type entry struct {
		name string
		fd   int
		link string
		dir  bool
	}
	names, err := os.ReadDir(anchor)
	if err != nil {
		return fmt.Errorf("grafting %s: %w", target, err)
	}
	var entries []entry
	defer func() {
		for _, e := range entries {
			if e.fd >= 0 {
				unix.Close(e.fd)
			}
		}
	}()
	for _, n := range names {
		p := filepath.Join(anchor, n.Name())
		if n.Type()&os.ModeSymlink != 0 {
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			entries = append(entries, entry{name: n.Name(), fd: -1, link: l})
			continue
		}
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			return fmt.Errorf("grafting %s: %w", target, err)
		}
		entries = append(entries, entry{name: n.Name(), fd: fd, dir: n.IsDir()})
	}
	mode := fmt.Sprintf("mode=%o", fi.Mode().Perm())
	if err := unix.Mount("tmpfs", anchor, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, mode); err != nil {
		return fmt.Errorf("grafting %s: covering %s: %w", target, anchor, err)
	}
	for _, e := range entries {
		p := filepath.Join(anchor, e.name)
		if e.fd < 0 {
			if err := os.Symlink(e.link, p); err != nil {
				return err
			}
			continue
		}
		if err := mountpoint(p, e.dir); err != nil {
			return err
		}
		if err := bindFd(e.fd, p, true); err != nil {
			return err
		}
	}
	if err := mountpoint(target, false); err != nil {
		return err
	}
	if err := bindFd(srcFd, target, true); err != nil {
		return err
	}
	if err := unix.Mount("", anchor, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, mode); err != nil {
		return fmt.Errorf("making %s read-only: %w", anchor, err)
	}
	return nil
}

// bindFd bind-mounts what fd (an O_PATH descriptor) refers to onto target, with its
// submounts, read-only if ro.
func bindFd(fd int, target string, ro bool) error {
	src := fmt.Sprintf("/proc/self/fd/%d", fd)
	if err := unix.Mount(src, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("binding %s: %w", target, err)
	}
	if ro {
		return readOnly(target)
	}
	return nil
}

// readOnly makes the mount at target and every mount below it read-only.
func readOnly(target string) error {
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(unix.AT_FDCWD, target, unix.AT_RECURSIVE, attr); err != nil {
		return fmt.Errorf("making %s read-only: %w", target, err)
	}
	return nil
}
