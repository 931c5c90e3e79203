//go:build e2e

package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/shell"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
)

// afterExit starts a background job that prints five lines once the shell has exited.
// Whether they come within pi's 100 ms grace is up to the scheduler, so the case
// compares everything but them; shell's own tests cover collecting them.
const afterExit = `(while kill -0 $$ 2>/dev/null; do sleep 0.001; done; for i in 1 2 3 4 5; do echo late$i; done) & echo go`

// logName matches the random part of a full-output file name, the one thing that may
// differ between pi's result and ours.
var logName = regexp.MustCompile(`pi-bash-[0-9a-f]{16}\.log`)

// TestBashMatchesPi runs the same commands through pi 1.6.0's bash tool and through
// `pi-sbx-backend tool --local bash` and compares content, details and isError — all of
// it but the random log-file name — and the full-output files byte for byte.
func TestBashMatchesPi(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // both pi and we put full-output files here
	cwd := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(cwd, "file"), nil, 0o644))
	tests := []struct {
		name string
		args map[string]any
		cwd  string
		// norm rewrites texts whose exact form depends on timing, on both sides.
		norm func(string) string
	}{
		{name: "output", args: cmd("echo hello; echo world")},
		{name: "empty command", args: cmd("")},
		{name: "no output", args: cmd("true")},
		{name: "no trailing newline", args: cmd("printf 'a\\nb'")},
		{name: "exit code", args: cmd("echo out; exit 3")},
		{name: "exit code without output", args: cmd("exit 42")},
		{name: "signal death", args: cmd("echo dying; kill -9 $$")},
		// pi reads stdout and stderr from two pipes, so only writes apart in time arrive
		// in order there; ours share one pipe and keep any order.
		{name: "stderr interleaving", args: cmd("echo 1; sleep 0.1; echo 2 >&2; sleep 0.1; echo 3; sleep 0.1; echo 4 >&2")},
		{name: "stderr only", args: cmd("echo oops >&2; exit 1")},
		{name: "over 2000 lines", args: cmd("seq 1 3000")},
		{name: "exactly 2000 lines", args: cmd("seq 1 2000")},
		{name: "over 50KB", args: cmd("for i in $(seq 1 1200); do printf '%080d\\n' $i; done")},
		{name: "over both, failing", args: cmd("seq 1 100000; exit 1")},
		{name: "one long line", args: cmd("head -c 60000 /dev/zero | tr '\\0' y")},
		{name: "one long line with newline", args: cmd("head -c 60000 /dev/zero | tr '\\0' y; echo")},
		{name: "long line then short", args: cmd("head -c 307200 /dev/zero | tr '\\0' x; printf '\\nshort\\n'")},
		{name: "multibyte at the cut", args: cmd("for i in $(seq 1 30000); do printf 'é'; done")},
		{name: "invalid UTF-8", args: cmd("printf 'a\\377b\\342\\202c\\355\\240\\200d\\n'")},
		{name: "escapes, CR and NUL kept", args: cmd("printf '\\033[31mred\\033[0m\\r\\nnul:\\000:end\\n'")},
		{name: "only newlines", args: cmd("yes '' | head -n 3000")},
		{name: "line longer than the rolling tail", args: cmd("head -c 400000 /dev/zero | tr '\\0' z")},
		{name: "long lines mixed", args: cmd("for i in 1 2 3; do head -c 70000 /dev/zero | tr '\\0' $i; echo; done; seq 1 10")},
		{name: "exit 255", args: cmd("exit 255")},
		{name: "closes its output, then runs", args: cmd("echo bye; exec >&- 2>&-; sleep 0.3")},
		{name: "timeout", args: cmdT("echo before; sleep 5", 0.5)},
		{name: "timeout without output", args: cmdT("sleep 5", 0.25)},
		// A background job that keeps writing until the timeout is not here: whether a
		// loaded machine schedules its writes within the grace decides the outcome on
		// either side. shell's TestBashTimeoutAfterShellExited pins the message pi gives
		// (reference/pi-tools.md) with the grace under the test's control.
		{name: "background child holding the pipe", args: cmd("sleep 3 & echo started")},
		// The background job writes only after the shell exited. How many of its lines
		// arrive within the grace depends on when it is scheduled, so they are left out on
		// both sides; shell's TestBashGraceReArmedPerChunk proves, with the grace under
		// its control, that every one is collected.
		{name: "background child writing after exit", args: cmd(afterExit),
			norm: func(s string) string {
				return strings.TrimRight(regexp.MustCompile(`(?m)^late\d(\n|$)`).ReplaceAllString(s, ""), "\n")
			}},
		{name: "zero timeout", args: cmdT("echo x", 0)},
		{name: "negative timeout", args: cmdT("echo x", -1)},
		{name: "too large timeout", args: cmdT("echo x", 2147484)},
		{name: "missing cwd", args: cmd("echo x"), cwd: filepath.Join(cwd, "missing")},
		{name: "cwd is a file", args: cmd("echo x"), cwd: filepath.Join(cwd, "file")},
	}
	calls := make([]Call, len(tests))
	for i, tt := range tests {
		c := tt.cwd
		if c == "" {
			c = cwd
		}
		calls[i] = Call{Tool: "bash", Cwd: c, Args: tt.args}
	}
	want := oracle(t, calls)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := local(t, calls[i])
			norm := tt.norm
			if norm == nil {
				norm = func(s string) string { return s }
			}
			assert.Equal(t, normalized(t, want[i], norm), normalized(t, got, norm))
			wantFile, gotFile := fullOutputPath(t, want[i]), fullOutputPath(t, got)
			require.Equal(t, wantFile != "", gotFile != "", "full-output file on one side only")
			if wantFile == "" {
				return
			}
			wantBytes, err := os.ReadFile(wantFile)
			require.NoError(t, err)
			gotBytes, err := os.ReadFile(gotFile)
			require.NoError(t, err)
			assert.True(t, string(wantBytes) == string(gotBytes), "full output differs: pi %d bytes, ours %d bytes", len(wantBytes), len(gotBytes))
			assert.True(t, strings.HasPrefix(gotFile, tmp+"/"), "full output %s is not in $TMPDIR", gotFile)
			st, err := os.Stat(gotFile)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
		})
	}
}

func cmd(c string) map[string]any { return map[string]any{"command": c} }

func cmdT(c string, timeout float64) map[string]any {
	return map[string]any{"command": c, "timeout": timeout}
}

// normalized is a result as generic JSON with log-file names made equal and texts
// normalized.
func normalized(t *testing.T, r result.Result, norm func(string) string) any {
	t.Helper()
	b, err := json.Marshal(r)
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	return walk(v, func(s string) string { return norm(logName.ReplaceAllString(s, "pi-bash-RANDOM.log")) })
}

func walk(v any, f func(string) string) any {
	switch x := v.(type) {
	case string:
		return f(x)
	case []any:
		for i := range x {
			x[i] = walk(x[i], f)
		}
	case map[string]any:
		for k := range x {
			x[k] = walk(x[k], f)
		}
	}
	return v
}

func fullOutputPath(t *testing.T, r result.Result) string {
	t.Helper()
	raw, ok := r.Details.(json.RawMessage)
	if !ok {
		return ""
	}
	var d struct {
		FullOutputPath string `json:"fullOutputPath"`
	}
	require.NoError(t, json.Unmarshal(raw, &d))
	return d.FullOutputPath
}

// streamCall is one bash call with streaming: partial results are recorded, and the
// call is aborted as soon as one contains abortOn.
type streamCall struct {
	Cwd     string         `json:"cwd"`
	Args    map[string]any `json:"args"`
	AbortOn string         `json:"abortOn,omitempty"`
}

type streamRun struct {
	Updates []json.RawMessage `json:"updates"`
	Result  json.RawMessage   `json:"result"`
}

// TestBashStreamingMatchesPi compares partial results (the first, pi's empty one, and
// the last, which carries the final output) and aborts with pi's own bash tool. How
// many updates come in between depends on timing, so only their shapes are checked:
// one text block, and details either empty or {truncation, fullOutputPath}.
func TestBashStreamingMatchesPi(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	cwd := t.TempDir()
	tests := []struct {
		name       string
		call       streamCall
		exactCount bool // the number of updates does not depend on timing
	}{
		{name: "no output", call: streamCall{Args: cmd("true")}, exactCount: true},
		{name: "output over time", call: streamCall{Args: cmd("echo one; sleep 0.3; echo two")}},
		{name: "truncated", call: streamCall{Args: cmd("seq 1 3000")}},
		{name: "abort", call: streamCall{Args: cmd("echo started; sleep 10; echo never"), AbortOn: "started"}},
		{name: "timeout", call: streamCall{Args: cmdT("echo waiting; sleep 10", 0.5)}},
	}
	calls := make([]streamCall, len(tests))
	for i, tt := range tests {
		calls[i] = tt.call
		calls[i].Cwd = cwd
	}
	want := streamOracle(t, calls)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := streamLocal(t, calls[i])
			require.NotEmpty(t, got.Updates)
			require.NotEmpty(t, want[i].Updates)
			norm := func(raw json.RawMessage) any { return normalizedUpdate(t, raw) }
			assert.Equal(t, norm(want[i].Result), norm(got.Result), "result")
			assert.Equal(t, norm(want[i].Updates[0]), norm(got.Updates[0]), "first update")
			last := len(got.Updates) - 1
			assert.Equal(t, norm(want[i].Updates[len(want[i].Updates)-1]), norm(got.Updates[last]), "last update")
			if tt.exactCount {
				assert.Equal(t, len(want[i].Updates), len(got.Updates), "number of updates")
			}
			for j, u := range got.Updates[1:] {
				assert.Contains(t, []string{"content:1 details:[]", "content:1 details:[fullOutputPath truncation]"}, shape(norm(u)), "update %d", j+1)
			}
		})
	}
}

// normalizedUpdate decodes a result or partial result with pi's omitted fields made
// explicit (details undefined is null, isError missing is false) and log names equal.
func normalizedUpdate(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	if _, ok := m["details"]; !ok {
		m["details"] = nil
	}
	if _, ok := m["isError"]; !ok {
		m["isError"] = false
	}
	return walk(m, func(s string) string { return logName.ReplaceAllString(s, "pi-bash-RANDOM.log") })
}

// shape is the set of keys of an update's details, and its number of content blocks.
func shape(v any) string {
	m := v.(map[string]any)
	var keys []string
	if d, ok := m["details"].(map[string]any); ok {
		for k := range d {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return fmt.Sprintf("content:%d details:%v", len(m["content"].([]any)), keys)
}

func streamOracle(t *testing.T, calls []streamCall) []streamRun {
	t.Helper()
	in, err := json.Marshal(calls)
	require.NoError(t, err)
	var runs []streamRun
	require.NoError(t, json.Unmarshal(runNode(t, "bash_stream.mjs", in), &runs))
	require.Len(t, runs, len(calls))
	return runs
}

// streamLocal runs the call through shell.Bash in this process, where a context stands
// for pi's AbortSignal.
func streamLocal(t *testing.T, c streamCall) streamRun {
	t.Helper()
	raw, err := json.Marshal(c.Args)
	require.NoError(t, err)
	var args shell.BashArgs
	require.NoError(t, json.Unmarshal(raw, &args))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var run streamRun
	onUpdate := func(r result.Result) {
		b, err := json.Marshal(r)
		require.NoError(t, err)
		run.Updates = append(run.Updates, b)
		if c.AbortOn != "" && len(r.Content) > 0 && strings.Contains(r.Content[0].Text, c.AbortOn) {
			cancel()
		}
	}
	res, err := shell.Bash(ctx, c.Cwd, args, shell.BashOptions{OnUpdate: onUpdate})
	if err != nil {
		res = result.Thrown(err)
	}
	run.Result, err = json.Marshal(res)
	require.NoError(t, err)
	return run
}
