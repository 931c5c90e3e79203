package keep

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/review"
)

// maxGitNotes bounds what review lists of a sandbox's own .git.
const maxGitNotes = 200

// gitNotesPath is where an overlay's notes of .git are kept, beside the record.
func (k *Keeper) gitNotesPath(r Record) string {
	return filepath.Join(k.Store.Dir, r.Sandbox+".gitnotes")
}

// saveGitNotes keeps the .git paths a collect found (overlay and tree sandboxes: the
// archive holds them).
func (k *Keeper) saveGitNotes(r Record, paths []string) error {
	var notes []string
	for _, p := range paths {
		notes = append(notes, review.Quote(p)+": written in the sandbox (a .git of its own; never landed)")
	}
	b, err := json.Marshal(notes)
	if err != nil {
		return err
	}
	if err := os.WriteFile(k.gitNotesPath(r), b, 0o600); err != nil {
		return fmt.Errorf("keeping what the sandbox wrote in .git: %w", err)
	}
	return nil
}

// gitNotes says what the sandbox did to its own .git — hooks, config, attributes —
// which land never writes but a user should see: in a clone, what changed between the
// first and the last record of it (gitMetaScript); elsewhere, what the last collect
// found.
func (k *Keeper) gitNotes(ctx context.Context, r Record) []string {
	if r.Kind != KindClone {
		b, err := os.ReadFile(k.gitNotesPath(r))
		var notes []string
		if err != nil || json.Unmarshal(b, &notes) != nil {
			return nil
		}
		return notes
	}
	meta := refPrefix + r.Sandbox + "/gitmeta"
	out, err := k.Git.do(ctx, run{dir: r.GitDir, args: []string{"diff-tree", "-r", "-z", "--name-status", "--no-renames", meta + "-start", meta}})
	if err != nil {
		return nil // not collected yet, or a sandbox from before these records
	}
	var notes []string
	fields := strings.Split(out, "\x00")
	for i := 0; i+1 < len(fields) && len(notes) < maxGitNotes; i += 2 {
		status, name := fields[i], ".git/"+strings.ReplaceAll(fields[i+1], ":", "/")
		what := map[string]string{"A": "added", "D": "deleted", "M": "changed"}[status]
		if what == "" {
			what = "changed"
		}
		notes = append(notes, fmt.Sprintf("%s: %s in the sandbox's clone (%s; never landed)", review.Quote(name), what, gitRisk(name)))
	}
	return notes
}

// gitRisk says why a file of .git matters.
func gitRisk(p string) string {
	switch {
	case strings.HasPrefix(p, ".git/hooks/"):
		return "a git hook runs on git commands"
	case p == ".git/config":
		return "git's configuration can name programs git runs"
	default:
		return "attributes can name filters and drivers git runs"
	}
}
