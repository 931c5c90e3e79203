package vmagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/shell"
	term "github.com/pi-sbx/pi-sbx-backend/internal/vm/terminal"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/truncate"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// killGrace is how long kill_session's default TERM has before KILL follows.
const killGrace = 2 * time.Second

// progressEvery throttles the raw output streamed as progress, as bash's.
const progressEvery = 100 * time.Millisecond

// TerminalLogDir is where the agent's terminal sessions log their raw output: private to
// the user the agent runs as, outside the workspace.
func TerminalLogDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("pi-sbx-terminal-%d", os.Getuid()))
}

// Terminal returns the implementations of the terminal tools over the session table
// manager returns (called at the first call, so that a registry that never runs a
// terminal tool makes no log directory): exec_command, write_stdin, read_output,
// kill_session, list_sessions, and the pi_sbx_terminal_resize method. They are unlisted
// here: serve decides which clients are offered them.
func Terminal(manager func() (*term.Manager, error)) []Impl {
	t := &termTools{manager: manager}
	return []Impl{
		{Tool: tools.ExecCommand(), Run: t.exec, Unlisted: true},
		{Tool: tools.WriteStdin(), Run: t.write, Unlisted: true},
		{Tool: tools.ReadOutput(), Run: t.read, Unlisted: true},
		{Tool: tools.KillSession(), Run: t.kill, Unlisted: true},
		{Tool: tools.ListSessions(), Run: t.list, Unlisted: true},
		{Tool: tools.TerminalResize(), Run: t.resize, Unlisted: true},
	}
}

// termTools runs the terminal tools (pi_sbx_pty_exec's table is terminals).
type termTools struct {
	manager func() (*term.Manager, error)
}

// DefaultTerminals returns the session table of this process, made at its first use with
// the default limits and logging to TerminalLogDir.
func DefaultTerminals() func() (*term.Manager, error) {
	return sync.OnceValues(func() (*term.Manager, error) {
		return term.NewManager(TerminalLogDir(), term.Limits{})
	})
}

// session returns the session with the given id.
func (t *termTools) session(id int) (*term.Session, error) {
	m, err := t.manager()
	if err != nil {
		return nil, err
	}
	s, err := m.Get(id)
	if errors.Is(err, term.ErrUnknown) {
		return nil, fmt.Errorf("%w: finished sessions are kept %s after they exit, and none survives a restart of the sandbox or its agent; list_sessions shows the ones there are",
			err, minutes(m.Retain()))
	}
	return s, err
}

// sessionCall decodes a session tool's arguments and looks up the session they name.
func sessionCall[A interface{ Session() int }](t *termTools, raw json.RawMessage, env tools.Env) (A, *term.Session, error) {
	a, err := decode[A](raw, env)
	if err != nil {
		return a, nil, err
	}
	s, err := t.session(a.Session())
	return a, s, err
}

// sessionDetails is the terminal tools' structuredContent.
type sessionDetails struct {
	SessionID  int    `json:"session_id"`
	Running    bool   `json:"running"`
	ExitCode   *int   `json:"exit_code,omitempty"`
	TimedOut   bool   `json:"timed_out,omitempty"`
	Matched    *bool  `json:"matched,omitempty"` // read_output with until_regex
	WallTimeMs int64  `json:"wall_time_ms"`
	Offset     int64  `json:"offset"`      // where this reply's output starts in the raw output
	NextOffset int64  `json:"next_offset"` // since_offset for the next read
	TotalBytes int64  `json:"total_bytes"`
	LogPath    string `json:"log_path"`
	Truncated  bool   `json:"truncated,omitempty"`
}

func (t *termTools) exec(ctx context.Context, cwd string, raw json.RawMessage, env tools.Env) (result.Result, error) {
	a, err := decode[tools.ExecCommandArgs](raw, env)
	if err != nil {
		return result.Result{}, err
	}
	dir := workdir(cwd, a.Workdir)
	if unix.Access(dir, unix.F_OK) != nil {
		return result.Result{}, fmt.Errorf("Working directory does not exist: %s", dir)
	}
	// Pagers pass text through (nobody presses q for the model); a terminal says what it
	// is. The call's own variables come last and win.
	vars := append([]string(nil), env.Vars...)
	vars = append(vars, "PAGER=cat", "GIT_PAGER=cat", "MANPAGER=cat", "SYSTEMD_PAGER=cat")
	if a.TTY {
		vars = append(vars, "TERM=xterm-256color")
	}
	vars, err = appendVars(vars, a.Env)
	if err != nil {
		return result.Result{}, err
	}
	var timeout time.Duration
	if a.TimeoutS != nil {
		if *a.TimeoutS <= 0 {
			return result.Result{}, fmt.Errorf("timeout_s must be positive, got %v", *a.TimeoutS)
		}
		timeout = time.Duration(*a.TimeoutS * float64(time.Second))
	}
	m, err := t.manager()
	if err != nil {
		return result.Result{}, err
	}
	start := time.Now()
	s, err := m.Start(term.Spec{Cmd: a.Cmd, Argv: []string{shell.Path(), "-c", a.Cmd}, Dir: dir, Env: vars,
		TTY: a.TTY, Cols: a.Cols, Rows: a.Rows, Timeout: timeout})
	if err != nil {
		return result.Result{}, err
	}
	yield := clampYield(a.YieldTimeMs, tools.ExecYieldDefault)
	return t.waitAndReply(ctx, s, start, term.WaitSpec{Deadline: start.Add(yield)}, a.MaxOutputTokens, nil, env)
}

func (t *termTools) write(ctx context.Context, _ string, raw json.RawMessage, env tools.Env) (result.Result, error) {
	a, s, err := sessionCall[tools.WriteStdinArgs](t, raw, env)
	if err != nil {
		return result.Result{}, err
	}
	start := time.Now()
	if a.Chars != "" {
		if err := s.Write([]byte(a.Chars)); err != nil {
			return result.Result{}, err
		}
	}
	from := s.Cursor()
	yield := clampYield(a.YieldTimeMs, tools.WriteYieldDefault)
	return t.waitAndReply(ctx, s, start, term.WaitSpec{From: from, Deadline: start.Add(yield)}, a.MaxOutputTokens, nil, env)
}

func (t *termTools) read(ctx context.Context, _ string, raw json.RawMessage, env tools.Env) (result.Result, error) {
	a, s, err := sessionCall[tools.ReadOutputArgs](t, raw, env)
	if err != nil {
		return result.Result{}, err
	}
	start := time.Now()
	from := s.Cursor()
	if a.SinceOffset != nil {
		if *a.SinceOffset < 0 {
			return result.Result{}, fmt.Errorf("since_offset must be >= 0, got %d", *a.SinceOffset)
		}
		from = *a.SinceOffset
	}
	w := term.WaitSpec{From: from}
	wait := 0
	if a.UntilRegex != "" {
		re, err := regexp.Compile(a.UntilRegex)
		if err != nil {
			return result.Result{}, fmt.Errorf("until_regex: %w", err)
		}
		w.Until, wait = re, tools.ReadWaitUntil
	}
	if a.WaitMs != nil {
		wait = min(max(*a.WaitMs, 0), tools.ReadWaitMax)
	}
	w.Deadline = start.Add(time.Duration(wait) * time.Millisecond)
	if a.TailLines != nil && *a.TailLines < 0 {
		return result.Result{}, fmt.Errorf("tail_lines must be >= 0, got %d", *a.TailLines)
	}
	return t.waitAndReply(ctx, s, start, w, a.MaxOutputTokens, a.TailLines, env)
}

func (t *termTools) kill(ctx context.Context, _ string, raw json.RawMessage, env tools.Env) (result.Result, error) {
	a, s, err := sessionCall[tools.KillSessionArgs](t, raw, env)
	if err != nil {
		return result.Result{}, err
	}
	start := time.Now()
	from := s.Cursor()
	sig := syscall.SIGTERM
	if a.Signal != "" {
		if sig = unix.SignalNum("SIG" + strings.TrimPrefix(strings.ToUpper(a.Signal), "SIG")); sig == 0 {
			return result.Result{}, fmt.Errorf("unknown signal %q", a.Signal)
		}
	}
	if err := s.Signal(sig); err != nil {
		return result.Result{}, err
	}
	if a.Signal == "" { // the default: TERM, then KILL for a group that ignored it
		st, err := s.Wait(ctx, term.WaitSpec{From: from, Deadline: time.Now().Add(killGrace)})
		if err != nil {
			return result.Result{}, err
		}
		if !st.Exited {
			if err := s.Signal(syscall.SIGKILL); err != nil {
				return result.Result{}, err
			}
		}
	}
	return t.waitAndReply(ctx, s, start, term.WaitSpec{From: from, Deadline: time.Now().Add(killGrace)}, nil, nil, env)
}

func (t *termTools) list(context.Context, string, json.RawMessage, tools.Env) (result.Result, error) {
	type entry struct {
		SessionID  int    `json:"session_id"`
		Cmd        string `json:"cmd"`
		TTY        bool   `json:"tty"`
		Running    bool   `json:"running"`
		ExitCode   *int   `json:"exit_code,omitempty"`
		Pid        int    `json:"pid"`
		StartedAt  string `json:"started_at"`
		TotalBytes int64  `json:"total_bytes"`
		LogPath    string `json:"log_path"`
		Waiting    int    `json:"waiting"` // calls waiting on its output now
	}
	var b strings.Builder
	list := []entry{}
	m, err := t.manager()
	if err != nil {
		return result.Result{}, err
	}
	for _, s := range m.List() {
		st := s.State()
		e := entry{SessionID: s.ID, Cmd: s.Cmd, TTY: s.TTY, Running: !st.Exited, Pid: s.Pgid,
			StartedAt: s.Started.UTC().Format(time.RFC3339), TotalBytes: st.Total, LogPath: s.LogPath,
			Waiting: s.Waiting()}
		status := "running"
		if st.Exited {
			code := st.Code
			e.ExitCode = &code
			status = fmt.Sprintf("exited with code %d", code)
		}
		list = append(list, e)
		fmt.Fprintf(&b, "%d\t%s\t%s\t%s\n", s.ID, status, truncate.FormatSize(int(st.Total)), oneLine(s.Cmd))
	}
	if len(list) == 0 {
		return result.Text("No sessions.", map[string]any{"sessions": list}), nil
	}
	return result.Text("session_id\tstatus\toutput\tcmd\n"+b.String(), map[string]any{"sessions": list}), nil
}

func (t *termTools) resize(_ context.Context, _ string, raw json.RawMessage, env tools.Env) (result.Result, error) {
	a, s, err := sessionCall[tools.TerminalResizeArgs](t, raw, env)
	if err != nil {
		return result.Result{}, err
	}
	if err := s.Resize(a.Cols, a.Rows); err != nil {
		return result.Result{}, err
	}
	return result.Text(fmt.Sprintf("resized to %dx%d", a.Cols, a.Rows), nil), nil
}

// waitAndReply waits as w says, streaming raw output as progress, then replies with the
// rendered output since w.From.
func (t *termTools) waitAndReply(ctx context.Context, s *term.Session, start time.Time, w term.WaitSpec,
	maxTokens, tailLines *int, env tools.Env) (result.Result, error) {
	if env.OnProgress != nil {
		var dec shell.UTF8Stream
		sent := 0
		w.OnOutput = func(raw []byte, total int64) {
			sent += len(raw)
			if text := dec.Decode(raw); text != "" {
				env.OnProgress(text, sent)
			}
		}
		w.ProgressEvery = progressEvery
	}
	from := w.From
	wr, err := s.Wait(ctx, w)
	if err != nil {
		// Cancelled: the wait stops, the command runs on, and its output stays unread.
		// (A cancellation that comes after the wait ended is not seen: that output is
		// read, and is still in the log and at its offset.)
		return result.Result{}, err
	}
	raw, off, st := s.Output(from)
	end := off + int64(len(raw))
	s.Advance(end)
	text := term.Render(raw, s.Rows())
	if tailLines != nil {
		text = lastLines(text, *tailLines)
	}
	o := truncate.Options{}
	if maxTokens != nil && *maxTokens > 0 {
		o.MaxBytes = min(truncate.DefaultMaxBytes, *maxTokens*4)
	}
	tr := truncate.Tail(text, o)
	wall := time.Since(start) // one figure for the text and the details
	d := sessionDetails{SessionID: s.ID, Running: !st.Exited, TimedOut: st.TimedOut, WallTimeMs: wall.Milliseconds(),
		Offset: off, NextOffset: end, TotalBytes: st.Total, LogPath: s.LogPath, Truncated: tr.Truncated}
	if w.Until != nil {
		d.Matched = &wr.Matched
	}
	var outcome result.Outcome
	if st.Exited {
		code := st.Code
		d.ExitCode = &code
		outcome = result.Exited(code)
	}
	var head strings.Builder
	fmt.Fprintf(&head, "Wall time: %.1f seconds\n", wall.Seconds())
	switch {
	case st.Exited && st.TimedOut:
		fmt.Fprintf(&head, "Process killed after its timeout_s (exit code %d)\n", st.Code)
	case st.Exited:
		fmt.Fprintf(&head, "Process exited with code %d\n", st.Code)
	default:
		fmt.Fprintf(&head, "Process running with session ID %d\n", s.ID)
	}
	if w.Until != nil && !wr.Matched {
		fmt.Fprintf(&head, "Pattern %q not seen\n", w.Until.String())
	}
	if off > from {
		fmt.Fprintf(&head, "(the %s before offset %d are no longer in memory, only in the log)\n", truncate.FormatSize(int(off-from)), off)
	}
	fmt.Fprintf(&head, "Log: %s (%s raw; next_offset %d)\n", s.LogPath, truncate.FormatSize(int(st.Total)), end)
	if _, lerr := s.LogStatus(); lerr != nil {
		fmt.Fprintf(&head, "Log incomplete: %v\n", lerr)
	}
	body := tr.Content
	switch {
	case !tr.Truncated:
	case tr.LastLinePartial:
		body += fmt.Sprintf("\n\n[Showing the last %s of a %s line. Full output: %s]", truncate.FormatSize(tr.OutputBytes), truncate.FormatSize(len(text)), s.LogPath)
	case *tr.TruncatedBy == "lines":
		body += fmt.Sprintf("\n\n[Showing the last %d lines. Full output: %s]", tr.OutputLines, s.LogPath)
	default:
		body += fmt.Sprintf("\n\n[Showing the last %d lines (%s limit). Full output: %s]", tr.OutputLines, truncate.FormatSize(tr.MaxBytes), s.LogPath)
	}
	if body == "" {
		body = "(no output)"
	}
	res := result.Text(head.String()+"Output:\n"+body, d)
	res.Outcome = outcome
	return res, nil
}

// clampYield is a yield_time_ms argument (or its default) within codex's bounds.
func clampYield(ms *int, def int) time.Duration {
	v := def
	if ms != nil {
		v = *ms
	}
	return time.Duration(min(max(v, tools.YieldMin), tools.YieldMax)) * time.Millisecond
}

// lastLines keeps the last n lines of text (a trailing newline ends the last line).
func lastLines(text string, n int) string {
	if n == 0 {
		return ""
	}
	trimmed := strings.TrimSuffix(text, "\n")
	idx := len(trimmed)
	for i := 0; i < n; i++ {
		j := strings.LastIndexByte(trimmed[:idx], '\n')
		if j < 0 {
			return text
		}
		idx = j
	}
	return text[idx+1:]
}

func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > 80 {
		s = s[:77] + "…"
	}
	return s
}

// minutes words a duration of whole minutes as a person would ("10 minutes").
func minutes(d time.Duration) string {
	if d%time.Minute != 0 {
		return d.String()
	}
	if d == time.Minute {
		return "1 minute"
	}
	return fmt.Sprintf("%d minutes", int(d/time.Minute))
}
