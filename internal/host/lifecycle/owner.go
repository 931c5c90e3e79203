package lifecycle

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/statefile"
)

// Owner is the project's own record of who created a sandbox, kept on the host (never in
// sbx's undocumented internal files): GC removes a stopped sandbox only when its record
// proves the owner gone.
type Owner struct {
	Name      string    `json:"name"`
	PID       int       `json:"pid"`
	Boot      string    `json:"boot,omitempty"`  // host boot identity when recorded ("" unknown)
	Start     string    `json:"start,omitempty"` // the owner process's start time ("" unknown)
	Created   time.Time `json:"created"`
	Pinned    bool      `json:"pinned,omitempty"` // named by DOCKER_SANDBOX: never collected
	Workspace string    `json:"workspace,omitempty"`
}

// Owners is the directory of owner records, one <sandbox>.json each.
type Owners struct{ Dir string }

// NewOwners returns the records' directory, stateHome/pi-sbx-backend/owners; stateHome is
// $XDG_STATE_HOME, else $HOME/.local/state ("" when neither is an absolute path).
func NewOwners(stateHome string) (*Owners, error) {
	if !filepath.IsAbs(stateHome) {
		return nil, errors.New("owner records need HOME (or XDG_STATE_HOME) to be an absolute path")
	}
	return &Owners{Dir: filepath.Join(stateHome, "pi-sbx-backend", "owners")}, nil
}

func (o *Owners) path(name string) (string, error) {
	if err := sbx.ValidateName(name); err != nil {
		return "", err
	}
	return filepath.Join(o.Dir, name+".json"), nil
}

// Record writes the record of a sandbox this process (pid) just created.
func (o *Owners) Record(name string, pid int, pinned bool, workspace string, now time.Time) error {
	p, err := o.path(name)
	if err != nil {
		return err
	}
	rec := Owner{Name: name, PID: pid, Boot: bootID(), Start: processStart(pid), Created: now.UTC(), Pinned: pinned, Workspace: workspace}
	if err := statefile.WriteJSON(p, rec); err != nil {
		return fmt.Errorf("owner record: %w", err)
	}
	return nil
}

// Read returns the record of name; an error wrapping os.ErrNotExist when there is none.
func (o *Owners) Read(name string) (Owner, error) {
	p, err := o.path(name)
	if err != nil {
		return Owner{}, err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return Owner{}, err
	}
	var rec Owner
	if err := json.Unmarshal(data, &rec); err != nil {
		return Owner{}, fmt.Errorf("owner record %s: %w", p, err)
	}
	if rec.Name != name || rec.PID <= 0 {
		return Owner{}, fmt.Errorf("owner record %s: not the record of %s", p, name)
	}
	return rec, nil
}

// Remove deletes the record of name (none is fine).
func (o *Owners) Remove(name string) error {
	p, err := o.path(name)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Gone reports whether the record's owner is provably no longer running: the host booted
// since, the pid is free, or the pid now belongs to a process that started later. When
// liveness cannot be told (another OS, no permission to know), it is not gone.
func (rec Owner) Gone() (bool, string) {
	if b := bootID(); rec.Boot != "" && b != "" && b != rec.Boot {
		return true, "the host has rebooted since the owner started"
	}
	switch processAlive(rec.PID) {
	case aliveNo:
		return true, fmt.Sprintf("owner pid %d is not running", rec.PID)
	case aliveYes:
		if s := processStart(rec.PID); rec.Start != "" && s != "" && s != rec.Start {
			return true, fmt.Sprintf("pid %d now belongs to another process", rec.PID)
		}
		return false, fmt.Sprintf("owner pid %d is running", rec.PID)
	default:
		return false, fmt.Sprintf("cannot tell whether owner pid %d runs", rec.PID)
	}
}

type alive int

const (
	aliveUnknown alive = iota
	aliveYes
	aliveNo
)

// ownerPID is the process recorded as a created sandbox's owner: the watchdog's owner,
// else this process.
func (s *Session) ownerPID() int {
	if s.Owner > 0 {
		return s.Owner
	}
	return os.Getpid()
}
