package vmagent

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/shell"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/truncate"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// Pty returns the implementations of pi_sbx_pty_exec and pi_sbx_pty_resize (unlisted:
// serve methods), which share the running calls' terminals.
func Pty() []Impl {
	t := &terminals{byID: map[string]*terminal{}}
	return []Impl{
		{Tool: tools.PtyExec(), Run: t.exec, Unlisted: true},
		{Tool: tools.PtyResize(), Run: t.resize, Unlisted: true},
	}
}

// terminals are the running pi_sbx_pty_exec calls that have an id, by id.
type terminals struct {
	mu   sync.Mutex
	byID map[string]*terminal
}

// terminal resizes one call's terminal while its command runs.
type terminal struct {
	mu     sync.Mutex
	resize func(cols, rows uint16) error // nil before the command starts and after it ends
}

func (tm *terminal) set(resize func(cols, rows uint16) error) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	tm.resize = resize
}

// add names a call's terminal, before its command starts (so that a second call with the
// same id fails without running); the returned func forgets it.
func (t *terminals) add(id string) (*terminal, func(), error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, dup := t.byID[id]; dup {
		return nil, nil, fmt.Errorf("pi_sbx_pty_exec: a call with id %q is running", id)
	}
	tm := &terminal{}
	t.byID[id] = tm
	return tm, func() {
		tm.set(nil)
		t.mu.Lock()
		defer t.mu.Unlock()
		delete(t.byID, id)
	}, nil
}

func (t *terminals) resize(_ context.Context, _ string, raw json.RawMessage, env tools.Env) (result.Result, error) {
	a, err := decode[tools.PtyResizeArgs](raw, env)
	if err != nil {
		return result.Result{}, err
	}
	t.mu.Lock()
	tm := t.byID[a.ID]
	t.mu.Unlock()
	var resize func(cols, rows uint16) error
	if tm != nil {
		tm.mu.Lock()
		defer tm.mu.Unlock()
		resize = tm.resize
	}
	// A call that has just ended (or not quite started) is no error of the caller's: its
	// resize raced the command.
	if resize == nil {
		return result.Text(fmt.Sprintf("no running command with id %q", a.ID), nil), nil
	}
	if err := resize(a.Cols, a.Rows); err != nil {
		return result.Result{}, fmt.Errorf("resizing the terminal of %q: %w", a.ID, err)
	}
	return result.Text(fmt.Sprintf("resized to %dx%d", a.Cols, a.Rows), nil), nil
}

// ptyExecDetails is pi_sbx_pty_exec's structuredContent.
type ptyExecDetails struct {
	ExitCode int `json:"exit_code"`
}

func (t *terminals) exec(ctx context.Context, cwd string, raw json.RawMessage, env tools.Env) (result.Result, error) {
	a, err := decode[tools.PtyExecArgs](raw, env)
	if err != nil {
		return result.Result{}, err
	}
	dir := workdir(cwd, a.Cwd)
	if unix.Access(dir, unix.F_OK) != nil {
		return result.Result{}, fmt.Errorf("Working directory does not exist: %s\nCannot execute bash commands.", dir)
	}
	vars := append([]string(nil), env.Vars...)
	vars, err = appendVars(vars, a.Env)
	if err != nil {
		return result.Result{}, err
	}
	// The result keeps the last 100 KB of output; the stream carries all of it.
	var tail []byte
	total := 0
	onOutput := func(text string) {
		total += len(text)
		tail = append(tail, text...)
		if len(tail) > 2*truncate.DefaultMaxBytes {
			tail = append(tail[:0], tail[len(tail)-truncate.DefaultMaxBytes:]...)
		}
		if env.OnProgress != nil {
			env.OnProgress(text, total)
		}
	}
	o := shell.PtyExecOptions{Dir: dir, Env: vars, Cols: a.Cols, Rows: a.Rows, OnOutput: onOutput}
	if a.ID != "" {
		tm, remove, err := t.add(a.ID)
		if err != nil {
			return result.Result{}, err
		}
		defer remove()
		o.OnStart = tm.set
	}
	code, err := shell.PtyExec(ctx, a.Command, o)
	if err != nil {
		return result.Result{}, err
	}
	return result.Text(truncate.Tail(string(tail), truncate.Options{}).Content, ptyExecDetails{ExitCode: code}), nil
}
