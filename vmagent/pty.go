package vmagent

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/pi-sbx/pi-sbx-backend/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/pi/truncate"
	"github.com/pi-sbx/pi-sbx-backend/shell"
	"github.com/pi-sbx/pi-sbx-backend/tools"
)

// PtyExec is the implementation of pi_sbx_pty_exec (unlisted: a serve method).
func PtyExec() Impl {
	return Impl{Tool: tools.PtyExec(), Run: ptyExec, Unlisted: true}
}

// ptyExecDetails is pi_sbx_pty_exec's structuredContent.
type ptyExecDetails struct {
	ExitCode int `json:"exit_code"`
}

func ptyExec(ctx context.Context, cwd string, raw json.RawMessage, env tools.Env) (result.Result, error) {
	a, err := decode[tools.PtyExecArgs](raw, env)
	if err != nil {
		return result.Result{}, err
	}
	dir := cwd
	if a.Cwd != "" {
		dir = a.Cwd
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
	}
	if unix.Access(dir, unix.F_OK) != nil {
		return result.Result{}, fmt.Errorf("Working directory does not exist: %s\nCannot execute bash commands.", dir)
	}
	vars := append([]string(nil), env.Vars...)
	keys := make([]string, 0, len(a.Env))
	for k := range a.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return result.Result{}, fmt.Errorf("env: invalid variable name %q", k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		vars = append(vars, k+"="+a.Env[k])
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
	code, err := shell.PtyExec(ctx, a.Command, shell.PtyExecOptions{Dir: dir, Env: vars, Cols: a.Cols, Rows: a.Rows, OnOutput: onOutput})
	if err != nil {
		return result.Result{}, err
	}
	return result.Text(truncate.Tail(string(tail), truncate.Options{}).Content, ptyExecDetails{ExitCode: code}), nil
}
