//go:build linux

package sbxsim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Clone mode (`sbx create --clone`, docs/sbxsim.md "Clone mode"): the host's git root is
// bound read-only at cloneSource (untracked and ignored files included); the agent works
// on a private clone on the sandbox's own storage, bound at the root's host path, with
// origin=cloneSource; a git daemon in the sandbox serves the clone on gitDaemonPort,
// published on an ephemeral host port (new at each start); the host repository gets the
// remote sandbox-<name> pointing at it, whose fetches also copy every branch under
// refs/sandboxes/<name>/, which outlives `sbx rm`. No branch is created.

// Clone is a clone-mode sandbox's record.
type Clone struct {
	Root string `json:"root"` // the host's git root (symlinks resolved)
	Dir  string `json:"dir"`  // the clone's storage, in the sandbox's state directory
	// Owner are the ids of the host repository's .git/config, which sbx edits as the
	// user it runs as.
	Owner IDs `json:"owner"`
}

const (
	cloneSource   = "/run/sandbox/source"
	gitDaemonPort = 9418
)

// cloneRootOf checks clone mode's preconditions on the primary workspace path and
// returns its git root: an explicit path, inside a git repository, not a linked
// worktree, with .git a real directory.
func cloneRootOf(paths []Workspace) (string, error) {
	if len(paths) == 0 {
		return "", errors.New("--clone requires an explicit workspace path")
	}
	p := paths[0].Path
	for dir := p; ; dir = filepath.Dir(dir) {
		fi, err := os.Lstat(filepath.Join(dir, ".git"))
		switch {
		case err == nil && fi.IsDir():
			return filepath.EvalSymlinks(dir)
		case err == nil && fi.Mode().IsRegular():
			return "", fmt.Errorf("--clone: %s is a git worktree (.git is a file); use the main repository", dir)
		case err == nil:
			return "", fmt.Errorf("--clone: %s/.git must be a real directory", dir)
		case !errors.Is(err, os.ErrNotExist):
			return "", fmt.Errorf("--clone: %w", err)
		}
		if dir == filepath.Dir(dir) {
			return "", fmt.Errorf("--clone: %s is not inside a git repository", p)
		}
	}
}

// newClone makes the clone's record and empty storage for sandbox name.
func (m *Manager) newClone(name, root string) (*Clone, error) {
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(root, ".git", "config"), &st); err != nil {
		return nil, fmt.Errorf("--clone: %s: %w", root, err)
	}
	c := &Clone{Root: root, Dir: filepath.Join(m.Store.dir(name), "clone"), Owner: IDs{UID: int(st.Uid), GID: int(st.Gid)}}
	if err := os.Mkdir(c.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("making the clone's storage: %w", err)
	}
	return c, nil
}

// cloneMounts are the init's mounts of a clone-mode primary: the host root read-only at
// cloneSource (idmapped as a workspace), the clone's storage at the root's path.
func cloneMounts(c *Clone) (source, clone Workspace) {
	return Workspace{Path: cloneSource, ReadOnly: true, From: c.Root}, Workspace{Path: c.Root, From: c.Dir}
}

// agentIDs are the ids agent's commands run with in sb.
func agentIDs(sb *Sandbox) IDs {
	if sb.RunAs != nil {
		return *sb.RunAs
	}
	return IDs{UID: AgentUID, GID: AgentGID}
}

// runAsAgent runs argv in the running sandbox as agent would through `sbx exec`, in dir.
func (m *Manager) runAsAgent(ctx context.Context, sb *Sandbox, dir string, argv ...string) error {
	nsenter, err := lookTool("nsenter")
	if err != nil {
		return err
	}
	setpriv, err := lookTool("setpriv")
	if err != nil {
		return err
	}
	ids := agentIDs(sb)
	args := []string{"--target", strconv.Itoa(sb.Init.Pid), "--mount", "--uts", "--ipc", "--net", "--pid", "--wdns=" + dir, "--"}
	args = append(append(args, dropPrivileges(setpriv, ids.UID, ids.GID, true)...), argv...)
	cmd := exec.CommandContext(ctx, nsenter, args...)
	cmd.Env = []string{"PATH=" + defaultPath, "HOME=" + AgentHome, "GIT_CONFIG_NOSYSTEM=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s in %s: %w: %s", strings.Join(argv, " "), sb.Name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// initClone clones the source into the clone's storage, once, right after the first
// start: what real sbx's VM does when it is created.
func (m *Manager) initClone(ctx context.Context, sb *Sandbox) error {
	if err := os.Chown(sb.Clone.Dir, agentIDs(sb).UID, agentIDs(sb).GID); err != nil {
		return err
	}
	if err := m.runAsAgent(ctx, sb, "/", "git", "clone", "--quiet", cloneSource, sb.Clone.Root); err != nil {
		return fmt.Errorf("cloning the workspace: %w", err)
	}
	return nil
}

// startGitDaemon starts the clone's git daemon in the sandbox (it detaches, and dies
// with the sandbox's PID namespace at a stop) and adds its port to those published.
func (m *Manager) startGitDaemon(ctx context.Context, sb *Sandbox) error {
	err := m.runAsAgent(ctx, sb, "/", "git", "daemon", "--detach", "--reuseaddr", "--export-all",
		"--listen=0.0.0.0", "--port="+strconv.Itoa(gitDaemonPort), sb.Clone.Root)
	if err != nil {
		return fmt.Errorf("starting the clone's git daemon: %w", err)
	}
	// git daemon --detach returns before it listens.
	addr := net.JoinHostPort(sb.Net.SandboxIP, strconv.Itoa(gitDaemonPort))
	for deadline := time.Now().Add(5 * time.Second); ; {
		if ok, _ := m.listening(sb, addr); ok {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the clone's git daemon is not listening on %s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, p := range sb.Ports {
		if p.SandboxPort == gitDaemonPort {
			return nil
		}
	}
	sb.Ports = append(sb.Ports, Port{HostIP: "127.0.0.1", SandboxPort: gitDaemonPort, Protocol: "tcp4", Ephemeral: true})
	return nil
}

// listening reports whether something accepts connections on addr in the sandbox's
// network namespace (asked of /proc/<init>/net/tcp: no process of ours enters it).
func (m *Manager) listening(sb *Sandbox, addr string) (bool, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/tcp", sb.Init.Pid))
	if err != nil {
		return false, err
	}
	want := fmt.Sprintf(":%04X ", gitDaemonPort)
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 3 && strings.HasSuffix(f[1]+" ", want) && f[3] == "0A" { // LISTEN
			return true, nil
		}
	}
	return false, nil
}

// remote is the host remote's name for sandbox name.
func remote(name string) string { return "sandbox-" + name }

// daemonURL is the clone's URL through its published port, "" when none.
func daemonURL(sb *Sandbox) string {
	for _, p := range sb.Ports {
		if p.SandboxPort == gitDaemonPort && p.HostPort != 0 {
			return fmt.Sprintf("git://%s%s", net.JoinHostPort(p.HostIP, strconv.Itoa(p.HostPort)), sb.Clone.Root)
		}
	}
	return ""
}

// hostGit runs git on the host repository's config or refs, as the repository's owner
// (sbx runs as the user), with no configuration but the repository's own and no hooks.
func hostGit(ctx context.Context, c *Clone, args ...string) (string, error) {
	git, err := lookTool("git")
	if err != nil {
		return "", err
	}
	args = append([]string{"--git-dir=" + filepath.Join(c.Root, ".git"), "-c", "core.hooksPath=/dev/null"}, args...)
	cmd := exec.CommandContext(ctx, git, args...)
	cmd.Env = []string{"PATH=" + defaultPath, "HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(c.Owner.UID), Gid: uint32(c.Owner.GID)}}
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("git %s: %w: %s", strings.Join(args[3:], " "), err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args[3:], " "), err)
	}
	return string(out), nil
}

// syncRemote points the host remote sandbox-<name> at the clone's current port (a
// restart changes it), adding the remote with its two refspecs the first time.
func (m *Manager) syncRemote(ctx context.Context, sb *Sandbox) error {
	url := daemonURL(sb)
	if url == "" {
		return errors.New("the clone's git daemon has no published port")
	}
	r := "remote." + remote(sb.Name)
	if _, err := hostGit(ctx, sb.Clone, "config", r+".url", url); err != nil {
		return err
	}
	if out, _ := hostGit(ctx, sb.Clone, "config", "--get-all", r+".fetch"); out != "" {
		return nil
	}
	for _, spec := range []string{"+refs/heads/*:refs/remotes/" + remote(sb.Name) + "/*", "+refs/heads/*:refs/sandboxes/" + sb.Name + "/*"} {
		if _, err := hostGit(ctx, sb.Clone, "config", "--add", r+".fetch", spec); err != nil {
			return err
		}
	}
	return nil
}

// dropRemote removes the host remote and its remote-tracking branches at `sbx rm`;
// refs/sandboxes/<name>/* stay.
func (m *Manager) dropRemote(ctx context.Context, sb *Sandbox) error {
	refs, err := hostGit(ctx, sb.Clone, "for-each-ref", "--format=%(refname)", "refs/remotes/"+remote(sb.Name)+"/")
	if err != nil {
		return err
	}
	for _, ref := range strings.Fields(refs) {
		if _, err := hostGit(ctx, sb.Clone, "update-ref", "-d", ref); err != nil {
			return err
		}
	}
	if _, err := hostGit(ctx, sb.Clone, "config", "--remove-section", "remote."+remote(sb.Name)); err != nil && !strings.Contains(err.Error(), "no such section") {
		return err
	}
	return nil
}

// unsavedBranches lists the clone's branches whose tip no ref of the host repository
// holds (not fetched, nor the host's own): the commits `sbx rm` warns about. Refs are
// read as files — the clone is the sandbox's to write, and nothing of it may run here.
func unsavedBranches(sb *Sandbox) []string {
	clone := readRefs(filepath.Join(sb.Clone.Dir, ".git"), "refs/heads/")
	known := map[string]bool{}
	for _, tip := range readRefs(filepath.Join(sb.Clone.Root, ".git"), "refs/") {
		known[tip] = true
	}
	var out []string
	for branch, tip := range clone {
		if !known[tip] {
			out = append(out, branch)
		}
	}
	sort.Strings(out)
	return out
}

// readRefs returns the refs under prefix of a git directory (loose and packed), by
// the name after the prefix; what it cannot read it leaves out.
func readRefs(gitDir, prefix string) map[string]string {
	refs := map[string]string{}
	if b, err := os.ReadFile(filepath.Join(gitDir, "packed-refs")); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			id, ref, ok := strings.Cut(line, " ")
			if name, under := strings.CutPrefix(ref, prefix); ok && under && len(id) >= 40 {
				refs[name] = id
			}
		}
	}
	root := filepath.Join(gitDir, filepath.FromSlash(prefix))
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type()&os.ModeSymlink != 0 {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil || len(b) > 200 {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		refs[filepath.ToSlash(rel)] = strings.TrimSpace(string(b))
		return nil
	})
	return refs
}
