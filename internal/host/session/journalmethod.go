package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/journal"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/journal/recorder"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// noJournal is the one line pi_sbx_calls and pi_sbx_undo answer outside review mode.
const noJournal = "the workspace is not in review mode (DOCKER_SANDBOX_WORKSPACE_MODE=review): there is no journal of the calls"

// JournalRoutes are serve's pi_sbx_calls and pi_sbx_undo (unlisted): the journal of the
// session's sandbox, and undo. rec is the session's recorder (nil outside review mode:
// both then answer so in one line), collect its work (which brings the checkpoints'
// commits to the host), sandbox its name, environ the host environment for git.
func JournalRoutes(rec *recorder.Recorder, collect Collector, sandbox string, environ []string) []mcpserver.Route {
	j := &journalMethods{rec: rec, collect: collect, sandbox: sandbox, environ: environ}
	return []mcpserver.Route{
		{Tool: tools.Calls(), Caller: mcpserver.Typed(j.calls), Unlisted: true},
		{Tool: tools.Undo(), Caller: mcpserver.Typed(j.undo), Unlisted: true},
	}
}

type journalMethods struct {
	rec     *recorder.Recorder
	collect Collector
	sandbox string
	environ []string
}

// callsResult is pi_sbx_calls's structuredContent.
type callsResult struct {
	Sandbox string         `json:"sandbox"`
	At      int            `json:"at"`              // the last checkpoint: what the workspace was when last seen
	Start   *journal.Entry `json:"start,omitempty"` // checkpoint 0, the workspace before the first call
	Calls   []journal.Call `json:"calls"`
}

// undoResult is pi_sbx_undo's structuredContent.
type undoResult struct {
	Sandbox    string        `json:"sandbox"`
	Target     journal.Entry `json:"target"`
	Warnings   []string      `json:"warnings"`
	Checkpoint int           `json:"checkpoint,omitempty"` // the undo's own checkpoint
	Done       bool          `json:"done"`
}

func toolError(text string) (*mcp.CallToolResult, error) {
	r := result.Text(text, nil)
	r.IsError = true
	return mcpserver.ToMCP(r)
}

// calls answers pi_sbx_calls: review --calls, as text and as data.
func (j *journalMethods) calls(ctx context.Context, _ mcpserver.Call) (*mcp.CallToolResult, error) {
	if j.rec == nil {
		return toolError(noJournal)
	}
	work, err := j.collect(ctx)
	if err != nil {
		return nil, err
	}
	entries, err := j.rec.Journal.Entries()
	if err != nil {
		return nil, err
	}
	calls, err := journal.Calls(ctx, work.Git(j.environ), work, entries)
	if err != nil {
		return nil, err
	}
	res := callsResult{Sandbox: work.Sandbox, Calls: calls}
	if res.Calls == nil {
		res.Calls = []journal.Call{}
	}
	if n := len(entries); n > 0 {
		res.At, res.Start = entries[n-1].N, &entries[0]
	}
	var text bytes.Buffer
	if len(calls) == 0 {
		fmt.Fprintf(&text, "no call of %s has changed the workspace yet\n", work.Sandbox)
	}
	for _, c := range calls {
		fmt.Fprintln(&text, journal.Line(c.Entry, c.Files, c.Added, c.Removed))
	}
	return mcpserver.ToMCP(result.Text(text.String(), res))
}

// undo answers pi_sbx_undo: pi-sbx-backend undo, or with dry_run what it would do.
func (j *journalMethods) undo(ctx context.Context, call mcpserver.Call) (*mcp.CallToolResult, error) {
	if j.rec == nil {
		return toolError(noJournal)
	}
	var args tools.UndoArgs
	if len(call.Args) > 0 {
		if err := json.Unmarshal(call.Args, &args); err != nil {
			return nil, fmt.Errorf("%s arguments: %w", tools.UndoName, err)
		}
	}
	to := ""
	switch {
	case args.To != nil && args.Last != 0:
		return toolError("to and last exclude each other")
	case args.To != nil:
		to = strconv.Itoa(*args.To)
	case args.Last == 0:
		args.Last = 1
	}
	entries, err := j.rec.Journal.Entries()
	if err != nil {
		return nil, err
	}
	target, err := journal.Target(entries, to, args.Last)
	if errors.Is(err, journal.ErrEmpty) {
		return toolError(fmt.Sprintf("sandbox %s: %v", j.sandbox, err))
	} else if err != nil {
		return toolError(err.Error())
	}
	res := undoResult{Sandbox: j.sandbox, Target: target, Warnings: []string{}}
	var text bytes.Buffer
	warn := func(h recorder.Holder) {
		w := recorder.Warning(h)
		res.Warnings = append(res.Warnings, w)
		fmt.Fprintln(&text, w)
	}
	if args.DryRun {
		holders, err := j.rec.Holders(ctx)
		if err != nil {
			return nil, err
		}
		for _, h := range holders {
			warn(h)
		}
		fmt.Fprintf(&text, "would reset the workspace of %s to checkpoint %d (after %s)\n", j.sandbox, target.N, journal.Describe(target))
		return mcpserver.ToMCP(result.Text(text.String(), res))
	}
	client := call.Client
	if client == "" {
		client = "serve"
	}
	e, err := j.rec.Undo(ctx, target, client, warn)
	if err != nil {
		return nil, fmt.Errorf("undo in %s: %w", j.sandbox, err)
	}
	res.Checkpoint, res.Done = e.N, true
	fmt.Fprintln(&text, journal.Undone(j.sandbox, target, e))
	return mcpserver.ToMCP(result.Text(text.String(), res))
}
