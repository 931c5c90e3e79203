package audit

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Store is the directory of every sandbox's audit log: beside the owner records in the
// user's state directory, one NAME.jsonl per sandbox.
type Store struct {
	Dir string
}

// NewStore returns the store under stateHome ($XDG_STATE_HOME, or ~/.local/state).
func NewStore(stateHome string) (Store, error) {
	if !filepath.IsAbs(stateHome) {
		return Store{}, errors.New("audit log: needs HOME (or XDG_STATE_HOME) to be an absolute path")
	}
	return Store{Dir: filepath.Join(stateHome, "pi-sbx-backend", "audit")}, nil
}

// Open returns the log of sandbox name, for appending.
func (s Store) Open(name string) (*Log, error) { return Open(s.Dir, name) }

// Path is the file of sandbox name's log.
func (s Store) Path(name string) string { return filepath.Join(s.Dir, name+".jsonl") }

// LogInfo is one sandbox's log, as listed.
type LogInfo struct {
	Sandbox  string
	Modified time.Time
	Size     int64
}

// List returns the logs in the store, the one written last at the end.
func (s Store) List() ([]LogInfo, error) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("audit logs: %w", err)
	}
	byName := map[string]LogInfo{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil {
			byName[name] = LogInfo{Sandbox: name, Modified: fi.ModTime(), Size: fi.Size()}
		}
	}
	return slices.SortedFunc(maps.Values(byName), func(a, b LogInfo) int {
		if c := a.Modified.Compare(b.Modified); c != 0 {
			return c
		}
		return strings.Compare(a.Sandbox, b.Sandbox)
	}), nil
}

// Newest is the sandbox whose log was written last.
func (s Store) Newest() (string, error) {
	all, err := s.List()
	if err != nil {
		return "", err
	}
	if len(all) == 0 {
		return "", fmt.Errorf("no audit log in %s yet: serve writes one per sandbox on its first tool call", s.Dir)
	}
	return all[len(all)-1].Sandbox, nil
}
