// Package keep is where a review sandbox's work comes from and where it is kept on the
// host: the start state the host writes (Base: the workspace, uncommitted changes
// included), the sandbox's work fetched back (Head), both as commits in a private
// object store under the user's state directory, and the record of which sandbox
// worked on which workspace, so that the work outlives the sandbox.
package keep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/lifecycle"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/statefile"
)

// Refs in the private store of sandbox NAME.
const (
	refPrefix = "refs/pi-sbx/"
	// vmBase and vmHead are the refs in the sandbox's own repository.
	vmBase = "refs/pi-sbx/base"
	vmHead = "refs/pi-sbx/head"
	// vmGitMeta is what of the clone's own .git could run on the host (gitMetaScript).
	vmGitMeta = "refs/pi-sbx/gitmeta"
)

// BaseRef is where the start state (Base) of sandbox name is kept; land moves it.
func BaseRef(name string) string { return refPrefix + name + "/base" }

// StartRef is the start state as it was written, never moved (overlay mode applies the
// upper layer to it).
func StartRef(name string) string { return refPrefix + name + "/start" }

// HeadRef is where the sandbox's last fetched work (Head) is kept.
func HeadRef(name string) string { return refPrefix + name + "/head" }

// BranchesRef is the prefix under which the sandbox's own branches are kept.
func BranchesRef(name string) string { return "refs/sandboxes/" + name + "/" }

// Kinds of review sandboxes.
const (
	KindClone   = "clone"   // a git workspace, sbx create --clone
	KindOverlay = "overlay" // any other: read-only mount and a copy-on-write layer
	// KindTree (cloud.go): any other, in a cloud sandbox, shipped as an archive.
)

// Record says which sandbox reviews which workspace, and where its work is kept.
type Record struct {
	Sandbox   string `json:"sandbox"`
	Kind      string `json:"kind"`
	Workspace string `json:"workspace"`          // as the session was given it
	Root      string `json:"root"`               // the paths' root: the git root, or the workspace
	GitDir    string `json:"git_dir"`            // the private store
	HostGit   string `json:"host_git,omitempty"` // the host repository's .git (clone)
	// Cloud: the sandbox is a cloud one (sbx --cloud): every call to it carries --cloud,
	// and its start state was shipped in (cloud.go).
	Cloud bool `json:"cloud,omitempty"`
	// Ship: paths relative to the workspace shipped to the cloud sandbox although
	// ignored or left out by default (PI_SBX_CLOUD_SHIP; ship.go).
	Ship    []string  `json:"ship,omitempty"`
	Created time.Time `json:"created"`
}

// Store is the directory of records and private object stores:
// $XDG_STATE_HOME/pi-sbx-backend/review (default ~/.local/state).
type Store struct{ Dir string }

// NewStore finds the store beside the owner records, under stateHome (settings.StateHome).
func NewStore(stateHome string) (Store, error) {
	o, err := lifecycle.NewOwners(stateHome)
	if err != nil {
		return Store{}, fmt.Errorf("review mode: %w", err)
	}
	return Store{Dir: filepath.Join(filepath.Dir(o.Dir), "review")}, nil
}

// GitDir is sandbox name's private object store.
func (s Store) GitDir(name string) string { return filepath.Join(s.Dir, name+".git") }

func (s Store) recordPath(name string) (string, error) {
	if err := sbx.ValidateName(name); err != nil {
		return "", err
	}
	return filepath.Join(s.Dir, name+".json"), nil
}

// Save writes a record (atomically).
func (s Store) Save(r Record) error {
	p, err := s.recordPath(r.Sandbox)
	if err != nil {
		return err
	}
	if err := statefile.WriteJSON(p, r); err != nil {
		return fmt.Errorf("writing the review record of %s: %w", r.Sandbox, err)
	}
	return nil
}

// Load reads sandbox name's record; fs.ErrNotExist when there is none.
func (s Store) Load(name string) (Record, error) {
	p, err := s.recordPath(name)
	if err != nil {
		return Record{}, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return Record{}, err
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return Record{}, fmt.Errorf("reading the review record of %s: %w", name, err)
	}
	return r, nil
}

// ForWorkspace returns the records whose workspace is dir or contains it, newest first.
func (s Store) ForWorkspace(dir string) ([]Record, error) {
	ents, err := os.ReadDir(s.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the review store: %w", err)
	}
	var out []Record
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		r, err := s.Load(name)
		if err != nil {
			continue
		}
		if within(r.Workspace, dir) || within(r.Root, dir) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.After(out[j].Created) })
	return out, nil
}

// HasCloud reports whether any record is a cloud sandbox's: this user has used the
// cloud, so sweeps look there too.
func (s Store) HasCloud() bool {
	ents, err := os.ReadDir(s.Dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		if r, err := s.Load(name); err == nil && r.Cloud {
			return true
		}
	}
	return false
}

// Forget removes sandbox name's record and private store (discard).
func (s Store) Forget(ctx context.Context, name string) error {
	p, err := s.recordPath(name)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(s.GitDir(name)); err != nil {
		return err
	}
	for _, f := range []string{p, filepath.Join(s.Dir, name+".collect.lock"), filepath.Join(s.Dir, name+".journal.jsonl"), filepath.Join(s.Dir, name+".journal.jsonl.lock"), filepath.Join(s.Dir, name+".gitnotes")} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// within reports whether path is dir or below it.
func within(dir, path string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
