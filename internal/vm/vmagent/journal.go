package vmagent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/checkpoint"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// Journal returns the implementation of pi_sbx_journal (unlisted: the host's). Its
// calls take turns: one the host gave up on (a cancelled call) still finishes, and the
// next must not find its index locked.
func Journal() Impl {
	j := &journaler{}
	return Impl{Tool: tools.Journal(), Run: j.run, Unlisted: true}
}

type journaler struct {
	mu      sync.Mutex
	batch   checkpoint.Batch   // git's batch processes, kept between checkpoints
	changes checkpoint.Changes // what names a command's changes in root
	root    string
}

// changesIn is what names a command's changes in root, made on first use: an inotify
// watch of it, or where inotify cannot watch it (no watches left) a scan of every
// file's stat. The watch sees what the sandbox changes; in an overlay over the host's
// files, the host's own changes send no event, and a checkpoint takes them when it
// looks at all of the tree. It is nil for the checkpoint that starts a watch, which
// must look at all of the tree; a scan's first answer is all of it anyway.
func (jr *journaler) changesIn(root string) checkpoint.Changes {
	if jr.changes != nil && jr.root == root {
		return jr.changes
	}
	if jr.changes != nil {
		jr.changes.Close()
	}
	jr.root = root
	if w, err := checkpoint.NewWatch(root); err == nil {
		jr.changes = w
		return nil
	}
	jr.changes = checkpoint.NewScan(root)
	return jr.changes
}

func (jr *journaler) run(ctx context.Context, _ string, raw json.RawMessage, env tools.Env) (result.Result, error) {
	jr.mu.Lock()
	defer jr.mu.Unlock()
	a, err := decode[tools.JournalArgs](raw, env)
	if err != nil {
		return result.Result{}, err
	}
	j := checkpoint.Journal{Root: a.Root, GitDir: a.GitDir, Index: a.Index, Batch: &jr.batch}
	if a.Op == "checkpoint" {
		j.Changes = jr.changesIn(a.Root)
	}
	// A checkpoint is short, and git killed halfway leaves its index locked: a call the
	// host gives up on finishes here all the same, within a bound.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), checkpoint.Timeout)
	defer cancel()
	switch a.Op {
	case "checkpoint":
		cp, err := j.Take(ctx, a.Parent, a.ParentTree, a.Ref, a.Message, a.Paths...)
		if err != nil {
			return result.Result{}, err
		}
		return detailed(fmt.Sprintf("checkpoint %s (changed: %v)", cp.Commit, cp.Changed), cp)
	case "restore":
		if err := j.Restore(ctx, a.Target); err != nil {
			return result.Result{}, err
		}
		return detailed("restored "+a.Target, map[string]string{"target": a.Target})
	case "holders":
		var held []checkpoint.Holder
		for _, h := range checkpoint.Holders(a.Root, jr.batch.PIDs()...) {
			if !strings.HasPrefix(h.Command, "pi-sbx-agent") { // the agents of other sessions
				held = append(held, h)
			}
		}
		return detailed("holders", map[string]any{"holders": held})
	}
	return result.Result{}, fmt.Errorf("pi_sbx_journal: unknown op %q", a.Op)
}

// detailed is a result whose details are v.
func detailed(text string, v any) (result.Result, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return result.Result{}, err
	}
	return result.Text(text, json.RawMessage(b)), nil
}
