// Package audit keeps the audit log of a sandbox: one JSON line per tool call from every
// client (pi, an editor's serve, the docker tools, a user's shell), in the user's state
// directory — never in the workspace, which the sandbox can write. It holds what a call
// was (the client, its id, the tool, its arguments' short form), how it ended and how
// long it took; never a file's content nor an environment variable's value.
package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/jsonwire"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// DefaultMax is the size at which a log is rotated: the current file becomes NAME.1
// (replacing the one before), so a log never holds more than twice this.
const DefaultMax = 8 << 20

// maxArg bounds one argument's short form.
const maxArg = 200

// Entry is one line of the log.
type Entry struct {
	Time     time.Time         `json:"time"`
	Client   string            `json:"client,omitempty"`
	CallID   string            `json:"call_id,omitempty"`
	Tool     string            `json:"tool"`
	Args     map[string]string `json:"args,omitempty"`
	Outcome  string            `json:"outcome"` // ok, error (the tool's), thrown, failed (the sandbox), cancelled
	Duration float64           `json:"duration_ms"`
	Files    []string          `json:"files,omitempty"` // the files the call wrote, where known
	Error    string            `json:"error,omitempty"` // why the call failed or was thrown, cut short
}

// Log is one sandbox's audit log, safe for concurrent use by every call of a process.
// Entries are appended whole (one write each, O_APPEND), so processes serving the same
// sandbox (pi and an editor) share the file without interleaving lines.
type Log struct {
	Path string
	Max  int64            // the size that rotates the file (DefaultMax when zero)
	Now  func() time.Time // time.Now when nil

	mu sync.Mutex
}

// Open returns the log of sandbox name in dir (created 0700 when missing).
func Open(dir, name string) (*Log, error) {
	if name == "" || name != filepath.Base(name) || name[0] == '.' {
		return nil, fmt.Errorf("audit log: bad sandbox name %q", name)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return &Log{Path: filepath.Join(dir, name+".jsonl")}, nil
}

// Append writes e as one line.
func (l *Log) Append(e Entry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	max := l.Max
	if max <= 0 {
		max = DefaultMax
	}
	if st, err := os.Stat(l.Path); err == nil && st.Size()+int64(len(line)) > max {
		if err := os.Rename(l.Path, l.Path+".1"); err != nil {
			return fmt.Errorf("audit log: rotating: %w", err)
		}
	}
	f, err := os.OpenFile(l.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	_, err = f.Write(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	return nil
}

func (l *Log) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// Caller wraps a route's caller so that every call it runs is logged. A failure to log
// is reported to onErr (the server's log) and never fails the call.
func (l *Log) Caller(c mcpserver.Caller, tool string, onErr func(error)) mcpserver.Caller {
	return &logged{Caller: c, log: l, tool: tool, onErr: onErr}
}

// Routes wraps every route's caller (see Caller), but for the window-size methods of
// terminals, which change nothing and would fill the log as a window is dragged.
func (l *Log) Routes(routes []mcpserver.Route, onErr func(error)) []mcpserver.Route {
	out := make([]mcpserver.Route, len(routes))
	for i, r := range routes {
		if r.Tool.Name != tools.PtyResizeName && r.Tool.Name != tools.TerminalResizeName {
			r.Caller = l.Caller(r.Caller, r.Tool.Name, onErr)
		}
		out[i] = r
	}
	return out
}

type logged struct {
	mcpserver.Caller
	log   *Log
	tool  string
	onErr func(error)
}

// CallTool implements mcpserver.Caller.
func (g *logged) CallTool(ctx context.Context, c mcpserver.Call) (json.RawMessage, error) {
	start := g.log.now()
	res, err := g.Caller.CallTool(ctx, c)
	e := Entry{
		Time: start.UTC(), Client: c.Client, CallID: c.ID, Tool: g.tool,
		Args:     ShortArgs(g.tool, c.Args, c.StandIns),
		Duration: float64(g.log.now().Sub(start).Microseconds()) / 1000,
		Files:    written(g.tool, c.Args, c.StandIns),
	}
	switch {
	case ctx.Err() != nil:
		e.Outcome = "cancelled"
	case err != nil:
		e.Outcome, e.Error = "failed", cut(err.Error())
	default:
		e.Outcome = outcome(res)
		if e.Outcome != "ok" {
			e.Error = cut(firstText(res))
		}
	}
	if e.Outcome != "ok" {
		e.Files = nil // what it may have written is not known
	}
	if lerr := g.log.Append(e); lerr != nil && g.onErr != nil {
		g.onErr(lerr)
	}
	return res, err
}

// ShellClient is the client, and the tool, of a command run by pi-sbx-backend shell: it
// reaches the sandbox through sbx exec, not through serve, so no route logs it.
const ShellClient = "shell"

// Shell logs a command run in the sandbox by pi-sbx-backend shell (a login shell's is
// "(login shell)"), begun at start: ok when it exited 0, error with its exit status
// otherwise, failed when it could not run (runErr). The shell gives no call id.
func (l *Log) Shell(command string, start time.Time, exitCode int, runErr error) error {
	e := Entry{
		Time: start.UTC(), Client: ShellClient, Tool: ShellClient,
		Args:     map[string]string{"command": cut(command)},
		Duration: float64(l.now().Sub(start).Microseconds()) / 1000,
		Outcome:  "ok",
	}
	switch {
	case runErr != nil:
		e.Outcome, e.Error = "failed", cut(runErr.Error())
	case exitCode != 0:
		e.Outcome, e.Error = "error", fmt.Sprintf("exit status %d", exitCode)
	}
	return l.Append(e)
}

// outcome reads how a call ended from its result's JSON.
func outcome(res json.RawMessage) string {
	if string(jsonwire.Member(res, "isError")) != "true" {
		return "ok"
	}
	if string(jsonwire.Member(jsonwire.Member(res, "_meta"), result.ThrownMeta)) == "true" {
		return "thrown"
	}
	return "error"
}

func firstText(res json.RawMessage) string {
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(res, &r) != nil || len(r.Content) == 0 {
		return ""
	}
	return r.Content[0].Text
}

// shortKeys are, per tool, the arguments kept in the log: what says what a call did,
// never content (write's content, edit's texts are counted instead).
var shortKeys = map[string][]string{
	"read":            {"path", "offset", "limit"},
	"write":           {"path"},
	"edit":            {"path"},
	"ls":              {"path", "limit"},
	"grep":            {"pattern", "path", "glob"},
	"find":            {"pattern", "path"},
	"bash":            {"command", "timeout"},
	"pi_sbx_pty_exec": {"command"},
	"exec_command":    {"cmd", "workdir"},
	"write_stdin":     {"session_id"},
}

// ShortArgs is the short form of a call's arguments: for known tools the members that
// say what it did (each cut at 200 bytes), write's content as its size, edit's edits as
// their count; for others every string, number and boolean member, cut likewise. A
// string that is a stand-in of standIns (the relay's, for a large one) is read as the
// string it stands for.
func ShortArgs(tool string, args json.RawMessage, standIns *jsonwire.Store) map[string]string {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil || len(m) == 0 {
		return nil
	}
	out := map[string]string{}
	keep := func(k string) {
		v, ok := m[k]
		if !ok {
			return
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			out[k] = cut(standIns.Value(s))
		} else if len(v) > 0 && v[0] != '{' && v[0] != '[' {
			out[k] = cut(string(v))
		}
	}
	keys, known := shortKeys[tool]
	if !known {
		for k := range m {
			keep(k)
		}
		return out
	}
	for _, k := range keys {
		keep(k)
	}
	switch tool {
	case "write":
		var s string
		if json.Unmarshal(m["content"], &s) == nil {
			out["content"] = fmt.Sprintf("%d bytes", len(standIns.Value(s)))
		}
	case "edit":
		var edits []json.RawMessage
		if json.Unmarshal(m["edits"], &edits) == nil {
			out["edits"] = fmt.Sprint(len(edits))
		}
	}
	return out
}

// written are the files a call of tool writes, where the arguments say it.
func written(tool string, args json.RawMessage, standIns *jsonwire.Store) []string {
	if tool != "write" && tool != "edit" {
		return nil
	}
	p, ok := jsonwire.Unquote(jsonwire.Member(args, "path"))
	if !ok || p == "" {
		return nil
	}
	return []string{cut(standIns.Value(p))}
}

// cut shortens s to maxArg bytes on a rune boundary, saying so.
func cut(s string) string {
	if len(s) <= maxArg {
		return s
	}
	n := maxArg
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Read calls fn with each entry of the log at path, oldest first (the rotated file's,
// then the current one's). A line that does not decode (a file cut by a crash) is
// skipped. With follow it then waits for new lines until ctx ends, polling every
// interval.
func Read(ctx context.Context, path string, follow bool, interval time.Duration, fn func(Entry) error) error {
	if err := readFile(path+".1", fn); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := os.Open(path)
	switch {
	case errors.Is(err, os.ErrNotExist) && follow:
		for errors.Is(err, os.ErrNotExist) {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(interval):
			}
			f, err = os.Open(path)
		}
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("no audit log at %s (no tool call logged yet)", path)
	}
	if err != nil {
		return err
	}
	defer func() { f.Close() }()
	r := bufio.NewReader(f)
	var partial []byte
	for {
		line, err := r.ReadBytes('\n')
		partial = append(partial, line...)
		if err == nil {
			if e, ok := decode(partial); ok {
				if err := fn(e); err != nil {
					return err
				}
			}
			partial = partial[:0]
			continue
		}
		if !errors.Is(err, io.EOF) {
			return err
		}
		if !follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
		// Rotated meanwhile: go on in the new file.
		if st, serr := os.Stat(path); serr == nil {
			if cur, ferr := f.Stat(); ferr == nil && !os.SameFile(st, cur) {
				nf, oerr := os.Open(path)
				if oerr == nil {
					f.Close()
					f, r, partial = nf, bufio.NewReader(nf), partial[:0]
				}
			}
		}
	}
}

func readFile(path string, fn func(Entry) error) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if e, ok := decode(line); ok {
			if err := fn(e); err != nil {
				return err
			}
		}
	}
	return nil
}

func decode(line []byte) (Entry, bool) {
	var e Entry
	line = bytes.TrimSpace(line)
	if len(line) == 0 || json.Unmarshal(line, &e) != nil || e.Tool == "" {
		return e, false
	}
	return e, true
}

// Format is an entry as one line of text: time, client, call id, tool, arguments,
// outcome, duration.
func Format(e Entry) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s  %-12s %-14s %-16s", e.Time.Local().Format("2006-01-02 15:04:05.000"), orDash(e.Client), orDash(e.CallID), e.Tool)
	for _, k := range slices.Sorted(maps.Keys(e.Args)) {
		fmt.Fprintf(&b, " %s=%q", k, e.Args[k])
	}
	fmt.Fprintf(&b, "  %s %.1fms", e.Outcome, e.Duration)
	if e.Error != "" {
		fmt.Fprintf(&b, " (%s)", oneLine(e.Error))
	}
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
