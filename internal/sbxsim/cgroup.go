//go:build linux

package sbxsim

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A sandbox with a dockerd gets a cgroup of its own in the host's cgroup2 hierarchy,
// <cgroup2>/sbxsim/<name>.<state hash>, and its init a cgroup namespace rooted there:
// the cgroup2 file system init mounts on /sys/fs/cgroup shows that subtree only, so the
// sandbox cannot see or write the host's cgroups (freeze, kill, limits) or another
// sandbox's containers. Inside, init moves itself to /init so that the root may
// delegate controllers to dockerd's /docker (cgroup2 allows no processes in a cgroup
// whose controllers are delegated).

// cgroup2Root is the host's cgroup2 mount point ("/sys/fs/cgroup" on a unified host,
// "/sys/fs/cgroup/unified" on a hybrid one), "" when there is none.
func cgroup2Root() string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		if fields := strings.Fields(pre); len(fields) >= 5 {
			return fields[4]
		}
	}
	return ""
}

// cgroupDir is the host path of a sandbox's cgroup, "" without a cgroup2 hierarchy. The
// state directory is part of the name: two state directories may hold the same names.
func (m *Manager) cgroupDir(name string) string {
	root := cgroup2Root()
	if root == "" {
		return ""
	}
	h := sha256.Sum256([]byte(m.Store.Root))
	return filepath.Join(root, "sbxsim", name+"."+hex.EncodeToString(h[:4]))
}

// placeInCgroup creates the sandbox's cgroup and moves its just-started init there,
// before init makes its cgroup namespace. The controllers the host offers are delegated
// to the sbxsim level (best effort: a host may keep some, and a hybrid host has none).
func (m *Manager) placeInCgroup(name string, pid int) error {
	dir := m.cgroupDir(name)
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating cgroup %s: %w", dir, err)
	}
	parent := filepath.Dir(dir)
	if b, err := os.ReadFile(filepath.Join(parent, "cgroup.controllers")); err == nil {
		for _, c := range strings.Fields(string(b)) {
			_ = os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+"+c), 0)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(fmt.Sprint(pid)), 0); err != nil {
		return fmt.Errorf("moving init into cgroup %s: %w", dir, err)
	}
	return nil
}

// removeCgroup removes a stopped sandbox's cgroup tree, deepest first. The kernel frees
// a cgroup only once its last task is reaped, so busy directories are retried briefly.
func (m *Manager) removeCgroup(name string) error {
	dir := m.cgroupDir(name)
	if dir == "" {
		return nil
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		err := rmdirTree(dir)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func rmdirTree(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			if err := rmdirTree(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	if err := unix.Rmdir(dir); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("removing cgroup %s: %w", dir, err)
	}
	return nil
}

// enterOwnCgroupNamespace is init's half, on the thread that goes on to start dockerd
// (the caller locks it: namespaces are per thread until a child inherits them): a new
// cgroup namespace rooted at init's cgroup, cgroup2 mounted on /sys/fs/cgroup from
// within it, init moved to /init, and the controllers it has delegated to the root's
// children.
func enterOwnCgroupNamespace() error {
	if err := unix.Unshare(unix.CLONE_NEWCGROUP); err != nil {
		return fmt.Errorf("creating a cgroup namespace: %w", err)
	}
	if err := unix.Mount("none", "/sys/fs/cgroup", "cgroup2", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting cgroup2 on /sys/fs/cgroup: %w", err)
	}
	if err := os.Mkdir("/sys/fs/cgroup/init", 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("creating cgroup /init: %w", err)
	}
	if err := os.WriteFile("/sys/fs/cgroup/init/cgroup.procs", []byte("0"), 0); err != nil {
		return fmt.Errorf("moving init to cgroup /init: %w", err)
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		for _, c := range strings.Fields(string(b)) {
			_ = os.WriteFile("/sys/fs/cgroup/cgroup.subtree_control", []byte("+"+c), 0)
		}
	}
	return nil
}
