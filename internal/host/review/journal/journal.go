// Package journal is review mode's per-call journal: after every call that can change
// the sandbox's workspace, a checkpoint of it is taken in the VM (a commit on a private
// ref, refs/pi-sbx/journal/N, made with a private index, so the agent's own index, HEAD
// and branches are untouched) and recorded on the host beside the review store: which
// client, its id for the call, the tool and its arguments' short form (the audit log's),
// the time. A call that changed nothing records nothing. Collecting the work brings the
// checkpoints' commits home with it (keep), so the journal outlives the sandbox; undo
// writes an earlier checkpoint's files back and is itself a checkpoint.
package journal

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/audit"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/filelock"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/jsonwire"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// Entry is one checkpoint. Entry 0 is the workspace before the first recorded call.
type Entry struct {
	N      int               `json:"n"`
	Time   time.Time         `json:"time"`
	Client string            `json:"client,omitempty"`
	CallID string            `json:"call_id,omitempty"`
	Tool   string            `json:"tool"`
	Args   map[string]string `json:"args,omitempty"`
	Commit string            `json:"commit"`
	Tree   string            `json:"tree"`
	Parent string            `json:"parent,omitempty"` // the previous checkpoint's commit
}

// Ref is checkpoint n's ref in the sandbox's repository.
func Ref(n int) string { return "refs/pi-sbx/journal/" + strconv.Itoa(n) }

// StartTool names entry 0's "tool".
const StartTool = "(start)"

// Journal is one sandbox's journal file, NAME.journal.jsonl in the review store.
type Journal struct{ Path string }

// Open returns the journal of sandbox name in the review store's directory.
func Open(storeDir, name string) Journal {
	return Journal{Path: filepath.Join(storeDir, name+".journal.jsonl")}
}

// Entries reads the journal, oldest first; a missing file is an empty journal. A line
// that does not decode (cut by a crash) is skipped.
func (j Journal) Entries() ([]Entry, error) {
	b, err := os.ReadFile(j.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the journal: %w", err)
	}
	var out []Entry
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var e Entry
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Commit != "" {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}

func (j Journal) append(e Entry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(j.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("writing the journal: %w", err)
	}
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing the journal: %w", err)
	}
	return nil
}

// Lock serializes checkpoints of one sandbox across processes (pi's serve and an
// editor's, an undo in a terminal).
func (j Journal) Lock(ctx context.Context) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(j.Path), 0o700); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	unlock, err = filelock.Lock(ctx, j.Path+".lock")
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	return unlock, nil
}

// Remove deletes the journal (discard, or a new sandbox of the same name).
func (j Journal) Remove() error {
	for _, p := range []string{j.Path, j.Path + ".lock"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Home is where the journal's private files live in the VM, outside the workspace.
const Home = "/home/agent/.pi-sbx-journal"

// VM is where sandbox's checkpoints are made in the VM: in a clone, the clone's own
// repository; in any other workspace, a private repository outside it.
type VM struct {
	Root, GitDir, Index string
}

// VMFor returns the VM side of sandbox's journal for a workspace root (clone: a git
// workspace cloned by sbx).
func VMFor(sandbox, root string, clone bool) VM {
	v := VM{Root: root, GitDir: path.Join(Home, sandbox+".git"), Index: path.Join(Home, sandbox+".index")}
	if clone {
		v.GitDir = path.Join(root, ".git")
	}
	return v
}

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
	Journal Journal
	VM      VM
	Cwd     string           // the calls' working directory, which their relative paths start from
	Agent   mcpserver.Caller // the channel to the sandbox's agent
	Now     func() time.Time // time.Now when nil
}

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
	_, _, err = r.take(ctx, nil, Call{Tool: StartTool})
	return err
}

// Record takes a checkpoint after call c and records it, unless the workspace is as
// the last checkpoint has it (recorded false).
func (r *Recorder) Record(ctx context.Context, c Call) (e Entry, recorded bool, err error) {
	unlock, err := r.Journal.Lock(ctx)
	if err != nil {
		return Entry{}, false, err
	}
	defer unlock()
	entries, err := r.Journal.Entries()
	if err != nil {
		return Entry{}, false, err
	}
	return r.take(ctx, entries, c)
}

// take checkpoints after entries (the lock held).
func (r *Recorder) take(ctx context.Context, entries []Entry, c Call) (Entry, bool, error) {
	e := Entry{N: len(entries), Time: r.now().UTC(), Client: c.Client, CallID: c.CallID, Tool: c.Tool, Args: c.Args}
	a := r.args("checkpoint")
	if n := len(entries); n > 0 {
		last := entries[n-1]
		e.N, e.Parent = last.N+1, last.Commit
		a.Parent, a.ParentTree = last.Commit, last.Tree
	}
	a.Ref, a.Paths = Ref(e.N), c.Paths
	a.Message = fmt.Sprintf("pi-sbx journal %d: %s %s", e.N, c.Tool, c.CallID)
	var cp struct {
		Commit  string `json:"commit"`
		Tree    string `json:"tree"`
		Changed bool   `json:"changed"`
	}
	if err := r.call(ctx, a, &cp); err != nil {
		return Entry{}, false, err
	}
	if !cp.Changed {
		return Entry{}, false, nil
	}
	if !isID(cp.Commit) || !isID(cp.Tree) {
		return Entry{}, false, fmt.Errorf("journal: the agent answered a bad checkpoint %q %q", cp.Commit, cp.Tree)
	}
	e.Commit, e.Tree = cp.Commit, cp.Tree
	return e, true, r.Journal.append(e)
}

// Restore writes checkpoint target's files over the workspace, recording what was there
// first (when it is not the last checkpoint already) and then the restore itself, as
// call c: both are entries, so the restore can be undone in turn.
func (r *Recorder) Restore(ctx context.Context, target Entry, c Call) (Entry, error) {
	unlock, err := r.Journal.Lock(ctx)
	if err != nil {
		return Entry{}, err
	}
	defer unlock()
	entries, err := r.Journal.Entries()
	if err != nil {
		return Entry{}, err
	}
	if e, ok, err := r.take(ctx, entries, Call{Client: c.Client, Tool: "(unrecorded changes)"}); err != nil {
		return Entry{}, fmt.Errorf("checkpointing before the undo: %w", err)
	} else if ok {
		entries = append(entries, e)
	}
	a := r.args("restore")
	a.Target = target.Commit
	if err := r.call(ctx, a, nil); err != nil {
		return Entry{}, err
	}
	e, ok, err := r.take(ctx, entries, c)
	if err != nil {
		return Entry{}, fmt.Errorf("checkpointing the undo: %w", err)
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
func (r *Recorder) only(tool string, args json.RawMessage) []string {
	if tool != "write" && tool != "edit" {
		return nil
	}
	p, ok := jsonwire.Unquote(jsonwire.Member(args, "path"))
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
	report(g.r.Start(ctx))
	res, err := g.Caller.CallTool(ctx, c)
	// A cancelled call still may have changed files: checkpoint it, on a context of
	// its own.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	_, _, rerr := g.r.Record(cctx, Call{Client: c.Client, CallID: c.ID, Tool: g.tool, Args: audit.ShortArgs(g.tool, c.Args), Paths: g.r.only(g.tool, c.Args)})
	report(rerr)
	return res, err
}

// Line is entry e as one line of `review --calls`: its number, client, call id, tool,
// arguments' short form, then what it changed (files, lines added and removed).
func Line(e Entry, files, added, removed int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-4d %-16s %-18s %-16s", e.N, orDash(e.Client), orDash(e.CallID), e.Tool)
	keys := make([]string, 0, len(e.Args))
	for k := range e.Args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%q", k, oneLine(e.Args[k]))
	}
	fmt.Fprintf(&b, "  %d file(s) +%d -%d", files, added, removed)
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string) string {
	if first, _, more := strings.Cut(s, "\n"); more {
		return first + " …"
	}
	return s
}

// Span is the checkpoints a spec names: "N" (call N alone) or "A..B" (calls A to B,
// their net change), among entries. From is the checkpoint before the first call, To
// the last call's.
func Span(entries []Entry, spec string) (from, to Entry, err error) {
	a, b, isRange := strings.Cut(spec, "..")
	if !isRange {
		b = a
	}
	na, errA := strconv.Atoi(a)
	nb, errB := strconv.Atoi(b)
	if errA != nil || errB != nil || na < 1 || nb < na {
		return Entry{}, Entry{}, fmt.Errorf("%q: want a call N or a span A..B of the journal's calls (1 ≤ A ≤ B)", spec)
	}
	byN := map[int]Entry{}
	for _, e := range entries {
		byN[e.N] = e
	}
	first, ok1 := byN[na]
	last, ok2 := byN[nb]
	if !ok1 || !ok2 {
		return Entry{}, Entry{}, fmt.Errorf("%q: the journal has calls 1 to %d", spec, len(entries)-1)
	}
	from, ok := byN[na-1]
	if !ok || from.Commit != first.Parent {
		return Entry{}, Entry{}, fmt.Errorf("%q: checkpoint %d is missing from the journal", spec, na-1)
	}
	return from, last, nil
}

// IsSpec reports whether arg reads as a call or a span of calls rather than a path.
func IsSpec(arg string) bool {
	a, b, isRange := strings.Cut(arg, "..")
	if _, err := strconv.Atoi(a); err != nil {
		return false
	}
	if isRange {
		_, err := strconv.Atoi(b)
		return err == nil
	}
	return true
}
