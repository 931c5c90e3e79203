//go:build linux

package sbxsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"golang.org/x/sys/unix"
)

// Sandbox is the persistent record of one sandbox: what create was asked for, and, while
// it runs, its init process, network slot and port proxies.
type Sandbox struct {
	Name       string      `json:"name"`
	Agent      string      `json:"agent"`
	Workspaces []Workspace `json:"workspaces"`
	CPUs       string      `json:"cpus,omitempty"`
	Memory     int64       `json:"memory,omitempty"`
	Template   string      `json:"template,omitempty"`
	Docker     bool        `json:"docker"`
	Hide       []string    `json:"hide,omitempty"`    // extra host directories hidden (SBXSIM_HIDE)
	Compose    string      `json:"compose,omitempty"` // host path of the docker compose plugin
	Created    time.Time   `json:"created"`
	// AutoStop is how long it runs after its last session ended (SBXSIM_AUTOSTOP at
	// create); 0: never stops by itself.
	AutoStop time.Duration `json:"autoStop,omitempty"`
	// Pull is create's --pull policy (always, missing, never).
	Pull string `json:"pull,omitempty"`
	// SSHAgent is the host's SSH agent socket forwarded into the sandbox (the creator's
	// SSH_AUTH_SOCK, while ssh.agentForwardingEnabled is true), "" for none.
	SSHAgent string `json:"sshAgent,omitempty"`
	// RunAs, when set, are the ids "agent" runs with: the workspace owner's, where the
	// workspace could not be idmapped (see errNoIdmap).
	RunAs *IDs `json:"runAs,omitempty"`
	// Share, when set, serves the workspaces over a virtiofs-shaped FUSE share
	// (SBXSIM_SHARE=fuse at create) instead of bind mounts.
	Share *Share `json:"share,omitempty"`
	// Clone is set for a sandbox created with --clone.
	Clone *Clone `json:"clone,omitempty"`
	// Resolve are the test hosts (SBXSIM_RESOLVE at create) the sandbox resolves and
	// reaches through its egress proxy.
	Resolve []Resolve `json:"resolve,omitempty"`
	// PolicyGate: created by sbx ≥ 0.55, whose proxy denies everything while no preset
	// is chosen (older ones let everything through).
	PolicyGate bool `json:"policyGate,omitempty"`
	// Cloud is set for a cloud sandbox (sbx --cloud create): its size and TTL.
	Cloud *Cloud `json:"cloud,omitempty"`
	// Egress is the running egress proxy.
	Egress *Proc    `json:"egress,omitempty"`
	Init   *Proc    `json:"init,omitempty"`
	Net    *NetSlot `json:"net,omitempty"`
	Ports  []Port   `json:"ports,omitempty"`
}

// IDs are a user and group id.
type IDs struct {
	UID int `json:"uid"`
	GID int `json:"gid"`
}

// Primary is the primary workspace's path, or "" for a mountless sandbox.
func (s *Sandbox) Primary() string {
	if len(s.Workspaces) == 0 {
		return ""
	}
	return s.Workspaces[0].Path
}

// Running reports whether the sandbox's init process is alive and still holds the
// sandbox's namespaces (an init being killed drops them before it is a zombie).
func (s *Sandbox) Running() bool {
	if s.Init == nil || !s.Init.Alive() {
		return false
	}
	_, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", s.Init.Pid))
	return err == nil
}

// Status is "running" or "stopped", the two values sbx ls reports.
func (s *Sandbox) Status() string {
	if s.Running() {
		return "running"
	}
	return "stopped"
}

// errNoSandbox is returned for a name with no sandbox; its text is sbx's.
type errNoSandbox struct{ name string }

func (e errNoSandbox) Error() string { return fmt.Sprintf("no sandbox named '%s'", e.name) }

// errNotFound is the other wording real sbx has for a missing sandbox (TP saw it at
// 0.42.1); stop, ports and cp use it, so that a client must know both.
type errNotFound struct{ name string }

func (e errNotFound) Error() string { return fmt.Sprintf("sandbox '%s' not found", e.name) }

// notFound rewords a missing-sandbox error as errNotFound.
func notFound(err error) error {
	var e errNoSandbox
	if errors.As(err, &e) {
		return errNotFound(e)
	}
	return err
}

// Store is the state directory: one subdirectory per sandbox holding its state.json, a
// lock file, logs and the data root of its dockerd.
type Store struct {
	Root string
}

func (st Store) dir(name string) string       { return filepath.Join(st.Root, "sandboxes", name) }
func (st Store) stateFile(name string) string { return filepath.Join(st.dir(name), "state.json") }

// reserve atomically claims name by creating its directory; it fails with fs.ErrExist
// when the name is taken.
func (st Store) reserve(name string) error {
	if err := os.MkdirAll(filepath.Join(st.Root, "sandboxes"), 0o700); err != nil {
		return fmt.Errorf("creating state directory: %w", err)
	}
	return os.Mkdir(st.dir(name), 0o700)
}

// Load reads a sandbox's state without locking: state files are replaced atomically.
func (st Store) Load(name string) (*Sandbox, error) {
	if validateName(name) != nil { // never a path outside the state directory
		return nil, errNoSandbox{name}
	}
	b, err := os.ReadFile(st.stateFile(name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, errNoSandbox{name}
	}
	if err != nil {
		return nil, fmt.Errorf("reading state of %s: %w", name, err)
	}
	var sb Sandbox
	if err := json.Unmarshal(b, &sb); err != nil {
		return nil, fmt.Errorf("parsing state of %s: %w", name, err)
	}
	return &sb, nil
}

// Save writes a sandbox's state atomically (write to a temporary file, then rename).
func (st Store) Save(sb *Sandbox) error {
	b, err := json.MarshalIndent(sb, "", "  ")
	if err != nil {
		return err
	}
	tmp := st.stateFile(sb.Name) + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("writing state of %s: %w", sb.Name, err)
	}
	if err := os.Rename(tmp, st.stateFile(sb.Name)); err != nil {
		return fmt.Errorf("writing state of %s: %w", sb.Name, err)
	}
	return nil
}

// List returns every sandbox, sorted by name. Directories without a state file (a create
// in progress) are skipped.
func (st Store) List() ([]*Sandbox, error) {
	ents, err := os.ReadDir(filepath.Join(st.Root, "sandboxes"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing sandboxes: %w", err)
	}
	var out []*Sandbox
	for _, e := range ents {
		sb, err := st.Load(e.Name())
		if err != nil {
			continue
		}
		out = append(out, sb)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// lock is an exclusive flock on one sandbox's lock file.
type lock struct{ f *os.File }

// Unlock releases the lock.
func (l *lock) Unlock() { l.f.Close() }

// Lock takes the sandbox's exclusive lock, waiting for other sbxsim processes, and
// returns errNoSandbox when the sandbox is (or, while waiting, was) removed: rm renames
// the directory away, so a lock file that is no longer at its path is stale.
func (st Store) Lock(ctx context.Context, name string) (*lock, error) {
	if validateName(name) != nil {
		return nil, errNoSandbox{name}
	}
	path := filepath.Join(st.dir(name), "lock")
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if errors.Is(err, os.ErrNotExist) {
			return nil, errNoSandbox{name}
		}
		if err != nil {
			return nil, fmt.Errorf("opening lock of %s: %w", name, err)
		}
		if err := flockCtx(ctx, f); err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", name, err)
		}
		var a, b unix.Stat_t
		if unix.Fstat(int(f.Fd()), &a) == nil && unix.Stat(path, &b) == nil && a.Ino == b.Ino && a.Dev == b.Dev {
			return &lock{f}, nil
		}
		f.Close()
	}
}

// flockCtx takes an exclusive flock, polling so that ctx can end the wait.
func flockCtx(ctx context.Context, f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// discard removes a sandbox's directory: first renamed into trash/ so that the name is
// free and concurrent readers see it gone at once, then deleted.
func (st Store) discard(name string) error {
	trash := filepath.Join(st.Root, "trash")
	if err := os.MkdirAll(trash, 0o700); err != nil {
		return fmt.Errorf("removing state of %s: %w", name, err)
	}
	tmp, err := os.MkdirTemp(trash, name+".")
	if err != nil {
		return fmt.Errorf("removing state of %s: %w", name, err)
	}
	dst := filepath.Join(tmp, "d")
	if err := os.Rename(st.dir(name), dst); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing state of %s: %w", name, err)
	}
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("removing state of %s: %w", name, err)
	}
	_ = os.Remove(trash) // only when empty: another rm may be using it
	return nil
}
