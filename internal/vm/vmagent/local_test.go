package vmagent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

func echo(calls *[]string) Impl {
	return Impl{
		Tool: &tools.Tool{Name: "echo", Schema: tools.Object([]string{"text"}, nil)},
		Run: func(_ context.Context, cwd string, args json.RawMessage, _ tools.Env) (result.Result, error) {
			*calls = append(*calls, string(args))
			var a struct{ Text string }
			if err := json.Unmarshal(args, &a); err != nil {
				return result.Result{}, err
			}
			if a.Text == "boom" {
				return result.Result{}, errors.New("it threw")
			}
			return result.Text(cwd+":"+a.Text, nil), nil
		},
	}
}

func TestCall(t *testing.T) {
	tests := []struct {
		name, tool, args string
		usage            string // non-empty: want an ErrUsage containing this
		want             result.Result
	}{
		{name: "ok", tool: "echo", args: `{"text":"hi"}`, want: result.Text("/w:hi", nil)},
		{name: "thrown error", tool: "echo", args: `{"text":"boom"}`, want: result.Thrown(errors.New("it threw"))},
		{name: "unknown tool", tool: "nope", args: `{}`, usage: `unknown tool "nope" (have echo)`},
		{name: "invalid arguments", tool: "echo", args: `{}`, usage: "text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls []string
			reg, err := New(echo(&calls))
			require.NoError(t, err)
			got, err := reg.Call(context.Background(), "/w", tt.tool, []byte(tt.args), tools.Env{})
			if tt.usage != "" {
				require.ErrorIs(t, err, tools.ErrUsage)
				assert.Contains(t, err.Error(), tt.usage)
				assert.Empty(t, calls, "a usage error must not run the tool")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestNewRejectsDuplicatesAndHoles(t *testing.T) {
	var calls []string
	_, err := New(echo(&calls), echo(&calls))
	assert.ErrorContains(t, err, "registered twice")
	_, err = New(Impl{Tool: tools.Read()})
	assert.ErrorContains(t, err, "incomplete")
}

// TestDefaultImplementsPisSevenAndThePtyMethods: the agent offers pi's seven; the pty
// methods, the terminal tools and the journal's method are there, unlisted.
func TestDefaultImplementsPisSevenAndThePtyMethods(t *testing.T) {
	terminal := append(tools.Names(tools.Terminal()), tools.TerminalResizeName)
	want := append(append(tools.Names(tools.Pi()), tools.PtyExecName, tools.PtyResizeName, tools.JournalName), terminal...)
	sort.Strings(want)
	assert.Equal(t, want, tools.Names(Default().Tools()))
	for _, im := range Default().Impls() {
		// The terminal tools are unlisted in the agent too: serve offers them to clients
		// that ask, so the agent's own list stays pi's seven.
		method := im.Tool.Name == tools.PtyExecName || im.Tool.Name == tools.PtyResizeName || im.Tool.Name == tools.JournalName || slices.Contains(terminal, im.Tool.Name)
		assert.Equal(t, method, im.Unlisted, "%s: only the serve methods and the terminal tools are unlisted", im.Tool.Name)
	}
}

// TestPtyExec: pi_sbx_pty_exec runs on a terminal, streams the output, reports the exit
// code in details, passes the caller's variables and its own env, and checks its cwd.
func TestPtyExec(t *testing.T) {
	dir := t.TempDir()
	var streamed strings.Builder
	last := 0
	env := tools.Env{Vars: []string{"PI_SESSION_ID=s1"}, OnProgress: func(text string, total int) {
		streamed.WriteString(text)
		last = total
	}}
	res, err := Default().Call(context.Background(), dir, tools.PtyExecName,
		[]byte(`{"command":"test -t 1 && echo tty; echo $PI_SESSION_ID $X; pwd; exit 4","env":{"X":"x1"},"cols":120}`), env)
	require.NoError(t, err)
	require.False(t, res.IsError, "%+v", res)
	assert.Equal(t, ptyExecDetails{ExitCode: 4}, res.Details)
	want := "tty\r\ns1 x1\r\n" + dir + "\r\n"
	assert.Equal(t, want, streamed.String())
	assert.Equal(t, len(want), last, "progress totals count the bytes streamed")
	assert.Equal(t, want, res.Content[0].Text)

	res, err = Default().Call(context.Background(), dir, tools.PtyExecName, []byte(`{"command":"true","cwd":"missing"}`), tools.Env{})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Equal(t, "Working directory does not exist: "+filepath.Join(dir, "missing")+"\nCannot execute bash commands.", res.Content[0].Text)
	_, err = Default().Call(context.Background(), dir, tools.PtyExecName, []byte(`{"command":"true","cols":0}`), tools.Env{})
	assert.ErrorIs(t, err, tools.ErrUsage)
}

// TestWriteAndEditRunThroughOneRegistry: write and edit work through the registry, which
// hands them its queue explicitly (fsops' own test proves the queue serializes edits).
func TestWriteAndEditRunThroughOneRegistry(t *testing.T) {
	dir := t.TempDir()
	reg := Default()
	res, err := reg.Call(context.Background(), dir, "write", []byte(`{"path":"f.txt","content":"a\n"}`), tools.Env{})
	require.NoError(t, err)
	require.False(t, res.IsError, "%+v", res)
	res, err = reg.Call(context.Background(), dir, "edit", []byte(`{"path":"f.txt","oldText":"a","newText":"b"}`), tools.Env{})
	require.NoError(t, err)
	require.False(t, res.IsError, "%+v", res)
	got, err := os.ReadFile(filepath.Join(dir, "f.txt"))
	require.NoError(t, err)
	assert.Equal(t, "b\n", string(got))
}

// TestPtyResize: pi_sbx_pty_resize gives a running pi_sbx_pty_exec call (named by its id)
// a new window size, which its command sees as SIGWINCH; an id in use is refused, and an
// id no call runs under is answered without an error (the resize raced the exit).
func TestPtyResize(t *testing.T) {
	reg := Default()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // bounds a hang only
	defer cancel()
	ready := make(chan struct{})
	var once sync.Once
	env := tools.Env{OnProgress: func(text string, _ int) {
		if strings.Contains(text, "ready") {
			once.Do(func() { close(ready) })
		}
	}}
	type outcome struct {
		res result.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := reg.Call(ctx, t.TempDir(), tools.PtyExecName, []byte(
			`{"id":"t1","cols":80,"rows":24,"command":"trap 'stty size </dev/tty; exit 0' WINCH; echo ready; while :; do sleep 0.05; done"}`), env)
		done <- outcome{res, err}
	}()
	select {
	case <-ready:
	case o := <-done:
		t.Fatalf("the command ended early: %+v %v", o.res, o.err)
	}
	res, err := reg.Call(ctx, "/", tools.PtyExecName, []byte(`{"id":"t1","command":"echo second"}`), tools.Env{})
	require.NoError(t, err)
	assert.True(t, res.IsError, "a second call with a running id is refused")

	res, err = reg.Call(ctx, "/", tools.PtyResizeName, []byte(`{"id":"t1","cols":132,"rows":43}`), tools.Env{})
	require.NoError(t, err)
	require.False(t, res.IsError, "%+v", res)
	o := <-done
	require.NoError(t, o.err)
	assert.Contains(t, o.res.Content[0].Text, "43 132", "the command saw the new size")
	assert.Equal(t, ptyExecDetails{ExitCode: 0}, o.res.Details)

	res, err = reg.Call(ctx, "/", tools.PtyResizeName, []byte(`{"id":"t1","cols":100,"rows":30}`), tools.Env{})
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Equal(t, `no running command with id "t1"`, res.Content[0].Text)
}
