//go:build linux

package sbxsim

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// Agent is the user commands run as, as in real sbx: UID and GID 1000, home /home/agent,
// passwordless sudo.
const (
	AgentUID  = 1000
	AgentGID  = 1000
	AgentHome = "/home/agent"
)

// The sandbox's own groups: agent is a member of both (sudo, as on Debian; docker, for
// the sandbox's daemon socket).
const (
	sudoGID   = 27
	dockerGID = 999
)

// maxID is the number of valid ids (0 … 2³²-2): uid_map's full range.
const maxID = 1<<32 - 1

// swapMap is the uid_map (or gid_map) of an idmapped workspace: the workspace owner's
// id on disk (owner) is agent's inside, and agent's id on disk is the owner's inside,
// every other id as it is. Files agent creates are thus the owner's on the host, the
// owner's files are agent's inside; a bijection, so nothing is squashed and root inside
// (sudo, the sandbox's dockerd) writes as the id swapped with it when the owner is root.
// In uid_map's terms an entry is "inside outside count": inside is the id callers see,
// outside the id on disk.
func swapMap(owner, agent int) []syscall.SysProcIDMap {
	if owner == agent {
		return []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: maxID}}
	}
	lo, hi := min(owner, agent), max(owner, agent)
	var m []syscall.SysProcIDMap
	add := func(inside, outside, size int) {
		if size > 0 {
			m = append(m, syscall.SysProcIDMap{ContainerID: inside, HostID: outside, Size: size})
		}
	}
	add(0, 0, lo)
	add(lo, hi, 1)
	add(lo+1, lo+1, hi-lo-1)
	add(hi, lo, 1)
	add(hi+1, hi+1, maxID-hi-1)
	return m
}

// idmapFor returns an open user namespace whose mappings make dir's owner agent (see
// swapMap), or nil when its owner already is agent. The namespace is made by a child
// that exists only until its namespace is open.
func (m *Manager) idmapFor(dir string) (*os.File, error) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	if int(st.Uid) == AgentUID && int(st.Gid) == AgentGID {
		return nil, nil
	}
	cmd := exec.Command(m.Self, "__userns")
	cmd.Env = []string{}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: swapMap(int(st.Uid), AgentUID),
		GidMappings: swapMap(int(st.Gid), AgentGID),
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("making the user namespace of %s's idmapped mount: %w", dir, err)
	}
	defer func() {
		stdin.Close() // __userns exits at EOF
		_ = cmd.Wait()
	}()
	ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/user", cmd.Process.Pid))
	if err != nil {
		return nil, err
	}
	// Try it on a detached copy first: a file system (or kernel) without idmapped
	// mounts is known here, before init needs it.
	tree, err := unix.OpenTree(unix.AT_FDCWD, dir, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err == nil {
		err = unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP, Userns_fd: uint64(ns.Fd())})
		unix.Close(tree)
	}
	if err != nil {
		ns.Close()
		return nil, fmt.Errorf("%w: %s: %v", errNoIdmap, dir, err)
	}
	return ns, nil
}

// errNoIdmap: the workspace's file system cannot be idmapped here. The sandbox then
// runs "agent" with the workspace owner's ids instead (Sandbox.RunAs), so that it can
// still write the workspace.
var errNoIdmap = errors.New("idmapped mounts are not supported")

// RunUserns is the hidden `__userns` mode: it holds its user namespace until stdin ends.
func RunUserns() int {
	var b [1]byte
	_, _ = os.Stdin.Read(b[:])
	return 0
}

// bindIdmapped binds src at target through the user namespace usernsFd (see swapMap),
// read-only if ro.
func bindIdmapped(src, target string, usernsFd int, ro bool) error {
	fi, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("binding %s: %w", src, err)
	}
	if err := mountpoint(target, fi.IsDir()); err != nil {
		return err
	}
	tree, err := unix.OpenTree(unix.AT_FDCWD, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if err != nil {
		return fmt.Errorf("cloning %s: %w", src, err)
	}
	defer unix.Close(tree)
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP, Userns_fd: uint64(usernsFd)}
	if ro {
		attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
	}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, attr); err != nil {
		return fmt.Errorf("idmapping %s: %w", src, err)
	}
	if err := unix.MoveMount(tree, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("mounting %s at %s: %w", src, target, err)
	}
	return nil
}
