package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/filelock"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/statefile"
)

// One sandbox may be used by several processes at once: a pi session's serve, an
// editor's serve and `pi-sbx-backend shell` on the project's warm sandbox
// (DOCKER_SANDBOX_REUSE) or a pinned one (DOCKER_SANDBOX). Each holds a lease while it
// uses the sandbox: a file <leases>/<sandbox>/<pid>.lease in the host's state directory
// naming the holder (pid, its start time, the host's boot). The process that created the
// sandbox does not tear it down while another live process holds a lease: it leaves that
// to its watchdog, which waits until the last holder is gone. A holder that died leaves
// a file behind that proves nothing: a lease counts only while its pid runs and is the
// same process (start time, boot), so a crash never pins a sandbox for ever.

// Lease is one process's claim on a sandbox.
type Lease struct {
	PID   int       `json:"pid"`
	Boot  string    `json:"boot,omitempty"`  // host boot identity when taken ("" unknown)
	Start string    `json:"start,omitempty"` // the holder's start time ("" unknown)
	Since time.Time `json:"since"`
	Role  string    `json:"role,omitempty"` // what holds it (serve, shell), for messages
}

// Leases is the directory of leases, one subdirectory per sandbox.
type Leases struct{ Dir string }

// Leases returns the lease directory kept beside the owner records.
func (o *Owners) Leases() *Leases {
	if o == nil {
		return nil
	}
	return &Leases{Dir: filepath.Join(filepath.Dir(o.Dir), "leases")}
}

// leaseSuffix ends every lease file's name; the watchdog's script globs for it.
const leaseSuffix = ".lease"

func (l *Leases) sandboxDir(name string) (string, error) {
	if err := sbx.ValidateName(name); err != nil {
		return "", err
	}
	return filepath.Join(l.Dir, name), nil
}

// lockPath is the file of the lease lock of sandbox name (a valid name).
func (l *Leases) lockPath(name string) string { return filepath.Join(l.Dir, name+".lock") }

// Lock serializes taking a lease on sandbox name with deciding to tear it down, across
// processes: a joiner's lease is either seen by the teardown or taken after it. The
// kernel releases the lock when its holder dies; waiting for it ends with ctx.
func (l *Leases) Lock(ctx context.Context, name string) (unlock func(), err error) {
	if err := sbx.ValidateName(name); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(l.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("locking the leases on sandbox %s: %w", name, err)
	}
	unlock, err = filelock.Lock(ctx, l.lockPath(name))
	if err != nil {
		return nil, fmt.Errorf("locking the leases on sandbox %s: %w", name, err)
	}
	return unlock, nil
}

// Take records that process pid uses sandbox name (replacing an earlier lease of pid).
func (l *Leases) Take(name string, pid int, role string, now time.Time) error {
	dir, err := l.sandboxDir(name)
	if err != nil {
		return err
	}
	lease := Lease{PID: pid, Boot: bootID(), Start: processStart(pid), Since: now.UTC(), Role: role}
	// Whole or not at all: a reader never sees half a lease.
	if err := statefile.WriteJSON(filepath.Join(dir, strconv.Itoa(pid)+leaseSuffix), lease); err != nil {
		return fmt.Errorf("taking the lease on sandbox %s: %w", name, err)
	}
	return nil
}

// Drop ends pid's lease on sandbox name (none is fine).
func (l *Leases) Drop(name string, pid int) error {
	dir, err := l.sandboxDir(name)
	if err != nil {
		return err
	}
	err = os.Remove(filepath.Join(dir, strconv.Itoa(pid)+leaseSuffix))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("dropping the lease on sandbox %s: %w", name, err)
	}
	os.Remove(dir) // only once empty: the last holder tidies up
	return nil
}

// Others returns the live leases on sandbox name held by processes other than pid,
// oldest first (none when l is nil). Leases of processes that are provably gone are
// removed on the way; one that cannot be read, or whose holder's liveness cannot be
// told, counts as live (it keeps the sandbox, never removes it).
func (l *Leases) Others(name string, pid int) ([]Lease, error) {
	if l == nil {
		return nil, nil
	}
	dir, err := l.sandboxDir(name)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the leases on sandbox %s: %w", name, err)
	}
	var live []Lease
	for _, e := range ents {
		stem, ok := strings.CutSuffix(e.Name(), leaseSuffix)
		holder, err := strconv.Atoi(stem)
		if !ok || err != nil || holder <= 0 || holder == pid {
			continue
		}
		p := filepath.Join(dir, e.Name())
		lease := Lease{PID: holder}
		if data, err := os.ReadFile(p); err == nil {
			if json.Unmarshal(data, &lease) != nil || lease.PID != holder {
				lease = Lease{PID: holder}
			}
		}
		if gone, _ := (Owner{PID: lease.PID, Boot: lease.Boot, Start: lease.Start}).Gone(); gone {
			os.Remove(p) // a crashed holder's lease pins nothing
			continue
		}
		live = append(live, lease)
	}
	sort.Slice(live, func(i, j int) bool { return live[i].Since.Before(live[j].Since) })
	return live, nil
}

// Describe names leases for a message: "pid 12 (shell), pid 34 (serve)".
func Describe(leases []Lease) string {
	parts := make([]string, len(leases))
	for i, l := range leases {
		parts[i] = "pid " + strconv.Itoa(l.PID)
		if l.Role != "" {
			parts[i] += " (" + l.Role + ")"
		}
	}
	return strings.Join(parts, ", ")
}

// prune removes the lock files (Lock's) of sandboxes sbx no longer lists that
// nobody holds a lease on and that were made longer ago than maxAge: one is left per
// sandbox name ever used otherwise. A lock removed while a process waits on it only
// lets two processes decide about a sandbox that does not exist at once.
func (l *Leases) prune(listed map[string]bool, now time.Time, maxAge time.Duration) {
	ents, err := os.ReadDir(l.Dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".lock")
		if !ok || listed[name] || sbx.ValidateName(name) != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(l.Dir, name)); err == nil {
			continue // leases are held (or were, by a process not yet proven gone)
		}
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > maxAge {
			os.Remove(filepath.Join(l.Dir, e.Name()))
		}
	}
}
