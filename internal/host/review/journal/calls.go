package journal

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/review"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/hostgit"
)

// Call is a checkpoint with what its call changed: the files, lines added and removed
// against the checkpoint before it (review --calls, serve's pi_sbx_calls).
type Call struct {
	Entry
	Files   int `json:"files"`
	Added   int `json:"added"`
	Removed int `json:"removed"`
}

// Calls is what each checkpoint after the start of entries changed, read from the store
// of the work c (which holds the checkpoints' commits once collected).
func Calls(ctx context.Context, g *hostgit.Git, c review.Changes, entries []Entry) ([]Call, error) {
	var out []Call
	for i, e := range entries {
		if i == 0 {
			continue
		}
		files, err := review.Files(ctx, g, review.Changes{GitDir: c.GitDir, Root: c.Root, Sandbox: c.Sandbox, Base: e.Parent, Head: e.Commit})
		if err != nil {
			return nil, fmt.Errorf("call %d: %w", e.N, err)
		}
		call := Call{Entry: e, Files: len(files)}
		for _, f := range files {
			call.Added += f.Added
			call.Removed += f.Removed
		}
		out = append(out, call)
	}
	return out, nil
}

// ErrEmpty is the error of an undo in a journal with no checkpoint.
var ErrEmpty = errors.New("the journal is empty: no call has changed the workspace")

// Target is the checkpoint an undo restores among entries: checkpoint to (a number;
// 0 is the start) when to is not "", else the one before the last `last` checkpoints.
// Any other error than ErrEmpty is the caller's mistake (a usage error).
func Target(entries []Entry, to string, last int) (Entry, error) {
	if len(entries) == 0 {
		return Entry{}, ErrEmpty
	}
	if to != "" {
		if n, err := strconv.Atoi(to); err == nil {
			for _, e := range entries {
				if e.N == n {
					return e, nil
				}
			}
		}
		return Entry{}, fmt.Errorf("--to %s: the journal has checkpoints 0 to %d", to, entries[len(entries)-1].N)
	}
	if last < 1 || last >= len(entries) {
		return Entry{}, fmt.Errorf("--last %d: the journal has %d checkpoint(s) after the start", last, len(entries)-1)
	}
	return entries[len(entries)-1-last], nil
}

// Describe names the call of a checkpoint: its tool and the client's id for it.
func Describe(e Entry) string {
	if e.N == 0 {
		return "nothing: the start"
	}
	s := e.Tool
	if e.CallID != "" {
		s += " " + e.CallID
	}
	return s
}

// Undone is the line saying an undo of sandbox reset its workspace to target, the undo
// itself being checkpoint e.
func Undone(sandbox string, target, e Entry) string {
	return fmt.Sprintf("reset the workspace of %s to checkpoint %d (after %s); this undo is checkpoint %d: undo --last 1 takes it back",
		sandbox, target.N, Describe(target), e.N)
}
