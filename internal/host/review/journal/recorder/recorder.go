// Package recorder takes the journal's checkpoints through the sandbox's agent and
// records them: after each call of a changing tool (serve's routes), at the end of a
// shell, and around an undo, which writes a checkpoint's files back.
package recorder

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/audit"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/journal"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/jsonwire"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// Call is what a checkpoint records of the call that made it.
type Call struct {
	Client, CallID, Tool string
	Args                 map[string]string
	// Paths, when set, are the only files the call can have changed (absolute, in the
	// VM): the checkpoint looks at those alone.
	Paths []string
}

// Recorder takes checkpoints through the agent and records them.
type Recorder struct {
	Journal journal.Journal
	VM      journal.VM
	Cwd     string           // the calls' working directory, which their relative paths start from
	Agent   mcpserver.Caller // the channel to the sandbox's agent
	Now     func() time.Time // time.Now when nil

	named inFlight
}

// inFlight counts the calls under way that name their files (writes, edits). pi runs a
// turn's calls side by side, and a command's checkpoint holds every file changed since
// the last one: taken before a write's beside it, it would hold the written file and
// the write's nothing. So a command's waits for those to be recorded first.
type inFlight struct {
	mu   sync.Mutex
	n    int
	done chan struct{} // closed when n is back to 0
}

func (f *inFlight) add() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		f.done = make(chan struct{})
	}
	f.n++
}

func (f *inFlight) remove() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n--; f.n == 0 {
		close(f.done)
	}
}

// wait waits until none is under way, for at most max: a write that hangs does not
// hold a command's checkpoint back for long.
func (f *inFlight) wait(ctx context.Context, max time.Duration) {
	f.mu.Lock()
	done := f.done // closed already when none is under way; nil before the first
	f.mu.Unlock()
	if done == nil {
		return
	}
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
}

// namedWait bounds a command's wait for the writes and edits beside it.
const namedWait = 10 * time.Second

func (r *Recorder) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Start takes checkpoint 0 (the workspace before any call) when the journal is empty.
func (r *Recorder) Start(ctx context.Context) error {
	unlock, err := r.Journal.Lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	entries, err := r.Journal.Entries()
	if err != nil || len(entries) > 0 {
		return err
	}
	_, _, err = r.take(ctx, nil, Call{Tool: journal.StartTool})
	return err
}

// Record takes a checkpoint after call c and records it, unless the workspace is as
// the last checkpoint has it (recorded false).
func (r *Recorder) Record(ctx context.Context, c Call) (e journal.Entry, recorded bool, err error) {
	unlock, err := r.Journal.Lock(ctx)
	if err != nil {
		return journal.Entry{}, false, err
	}
	defer unlock()
	entries, err := r.Journal.Entries()
	if err != nil {
		return journal.Entry{}, false, err
	}
	return r.take(ctx, entries, c)
}

// take checkpoints after entries (the lock held).
func (r *Recorder) take(ctx context.Context, entries []journal.Entry, c Call) (journal.Entry, bool, error) {
	e := journal.Entry{N: len(entries), Time: r.now().UTC(), Client: c.Client, CallID: c.CallID, Tool: c.Tool, Args: c.Args}
	a := r.args("checkpoint")
	if n := len(entries); n > 0 {
		last := entries[n-1]
		e.N, e.Parent = last.N+1, last.Commit
		a.Parent, a.ParentTree = last.Commit, last.Tree
	}
	a.Ref, a.Paths = journal.Ref(e.N), c.Paths
	a.Message = fmt.Sprintf("pi-sbx journal %d: %s %s", e.N, c.Tool, c.CallID)
	var cp struct {
		Commit  string `json:"commit"`
		Tree    string `json:"tree"`
		Changed bool   `json:"changed"`
	}
	if err := r.call(ctx, a, &cp); err != nil {
		return journal.Entry{}, false, err
	}
	if !cp.Changed {
		return journal.Entry{}, false, nil
	}
	if !isID(cp.Commit) || !isID(cp.Tree) {
		return journal.Entry{}, false, fmt.Errorf("journal: the agent answered a bad checkpoint %q %q", cp.Commit, cp.Tree)
	}
	e.Commit, e.Tree = cp.Commit, cp.Tree
	return e, true, r.Journal.Append(e)
}

// Restore writes checkpoint target's files over the workspace, recording what was there
// first (when it is not the last checkpoint already) and then the restore itself, as
// call c: both are entries, so the restore can be undone in turn.
func (r *Recorder) Restore(ctx context.Context, target journal.Entry, c Call) (journal.Entry, error) {
	unlock, err := r.Journal.Lock(ctx)
	if err != nil {
		return journal.Entry{}, err
	}
	defer unlock()
	entries, err := r.Journal.Entries()
	if err != nil {
		return journal.Entry{}, err
	}
	if e, ok, err := r.take(ctx, entries, Call{Client: c.Client, Tool: "(unrecorded changes)"}); err != nil {
		return journal.Entry{}, fmt.Errorf("checkpointing before the undo: %w", err)
	} else if ok {
		entries = append(entries, e)
	}
	a := r.args("restore")
	a.Target = target.Commit
	if err := r.call(ctx, a, nil); err != nil {
		return journal.Entry{}, err
	}
	e, ok, err := r.take(ctx, entries, c)
	if err != nil {
		return journal.Entry{}, fmt.Errorf("checkpointing the undo: %w", err)
	}
	if !ok {
		return entries[len(entries)-1], nil // it was there already
	}
	return e, nil
}

// Holder is a process in the sandbox holding files of the workspace.
type Holder struct {
	PID     int      `json:"pid"`
	Command string   `json:"command"`
	Files   []string `json:"files"`
}

// Holders lists the processes in the sandbox whose files or working directory are in
// the workspace.
func (r *Recorder) Holders(ctx context.Context) ([]Holder, error) {
	var out struct {
		Holders []Holder `json:"holders"`
	}
	err := r.call(ctx, r.args("holders"), &out)
	return out.Holders, err
}

func (r *Recorder) args(op string) tools.JournalArgs {
	return tools.JournalArgs{Op: op, Root: r.VM.Root, GitDir: r.VM.GitDir, Index: r.VM.Index}
}

// call runs pi_sbx_journal in the agent and decodes its details into out.
func (r *Recorder) call(ctx context.Context, a tools.JournalArgs, out any) error {
	raw, err := json.Marshal(a)
	if err != nil {
		return err
	}
	res, err := r.Agent.CallTool(ctx, mcpserver.Call{Name: tools.JournalName, Args: raw, Client: "pi-sbx-journal"})
	if err != nil {
		return fmt.Errorf("journal %s: %w", a.Op, err)
	}
	if string(jsonwire.Member(res, "isError")) == "true" {
		var r struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		_ = json.Unmarshal(res, &r)
		msg := "failed"
		if len(r.Content) > 0 {
			msg = r.Content[0].Text
		}
		return fmt.Errorf("journal %s: %s", a.Op, msg)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(jsonwire.Member(res, "structuredContent"), out); err != nil {
		return fmt.Errorf("journal %s: the agent's answer: %w", a.Op, err)
	}
	return nil
}

// isID reports whether s is a git object id (SHA-1 or SHA-256, hex).
func isID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}

// only is the file a write or an edit changes, as an absolute path, when its argument
// says it plainly (no ~ or @, which pi expands); nil for any other call.
func (r *Recorder) only(tool string, args json.RawMessage, standIns *jsonwire.Store) []string {
	if tool != "write" && tool != "edit" {
		return nil
	}
	p, ok := jsonwire.Unquote(jsonwire.Member(args, "path"))
	p = standIns.Value(p)
	if !ok || p == "" || strings.HasPrefix(p, "~") || strings.HasPrefix(p, "@") || strings.ContainsRune(p, 0) {
		return nil
	}
	if !path.IsAbs(p) {
		if r.Cwd == "" {
			return nil
		}
		p = path.Join(r.Cwd, p)
	}
	return []string{path.Clean(p)}
}

// Changing are the tools after which a checkpoint is taken: they can change files in
// the workspace (a docker tool through a container that binds it).
var changing = map[string]bool{
	"write": true, "edit": true, "bash": true, tools.PtyExecName: true,
	tools.ExecCommandName: true, tools.WriteStdinName: true,
	"docker_run": true, "docker_exec": true, "docker_compose": true, "docker_init": true, "docker_start": true,
}

// Changing reports whether a call of tool can change the workspace's files.
func Changing(tool string) bool { return changing[tool] }

// Routes wraps the routes of the changing tools: after each call (whatever its outcome:
// a failed command may have written files) a checkpoint is recorded. A checkpoint that
// fails is reported to onErr and never fails the call.
func (r *Recorder) Routes(routes []mcpserver.Route, onErr func(error)) []mcpserver.Route {
	out := make([]mcpserver.Route, len(routes))
	for i, rt := range routes {
		if Changing(rt.Tool.Name) {
			rt.Caller = &recorded{Caller: rt.Caller, r: r, tool: rt.Tool.Name, onErr: onErr}
		}
		out[i] = rt
	}
	return out
}

type recorded struct {
	mcpserver.Caller
	r     *Recorder
	tool  string
	onErr func(error)
}

// CallTool implements mcpserver.Caller.
func (g *recorded) CallTool(ctx context.Context, c mcpserver.Call) (json.RawMessage, error) {
	report := func(err error) {
		if err != nil && g.onErr != nil {
			g.onErr(err)
		}
	}
	if err := g.r.Start(ctx); ctx.Err() == nil { // cancelled: the call does not run either
		report(err)
	}
	paths := g.r.only(g.tool, c.Args, c.StandIns)
	if len(paths) > 0 {
		g.r.named.add()
	}
	res, err := g.Caller.CallTool(ctx, c)
	// A cancelled call still may have changed files: checkpoint it, on a context of
	// its own.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if len(paths) == 0 {
		g.r.named.wait(cctx, namedWait) // the writes and edits beside it first
	}
	_, _, rerr := g.r.Record(cctx, Call{Client: c.Client, CallID: c.ID, Tool: g.tool, Args: audit.ShortArgs(g.tool, c.Args, c.StandIns), Paths: paths})
	if len(paths) > 0 {
		g.r.named.remove()
	}
	report(rerr)
	return res, err
}

// Warning is the line naming a process that holds files of the workspace, said before
// an undo: it may write again after it.
func Warning(h Holder) string {
	return fmt.Sprintf("warning: process %d (%s) holds %s in the workspace: it may change it again after the undo", h.PID, h.Command, strings.Join(h.Files, ", "))
}

// Undo resets the workspace to checkpoint target for client (pi-sbx-backend undo, serve's
// pi_sbx_undo): first warn gets each process in the sandbox holding files of the
// workspace, then the files are restored (Restore: the undo is a checkpoint of its own).
func (r *Recorder) Undo(ctx context.Context, target journal.Entry, client string, warn func(Holder)) (journal.Entry, error) {
	holders, err := r.Holders(ctx)
	if err != nil {
		return journal.Entry{}, err
	}
	for _, h := range holders {
		warn(h)
	}
	return r.Restore(ctx, target, Call{Client: client, Tool: "undo", Args: map[string]string{"to": strconv.Itoa(target.N)}})
}
