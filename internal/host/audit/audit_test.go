package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

func TestShortArgs(t *testing.T) {
	long := strings.Repeat("é", 150) // 300 bytes
	for _, tc := range []struct {
		tool, args string
		want       map[string]string
	}{
		{"read", `{"path":"a.go","offset":3}`, map[string]string{"path": "a.go", "offset": "3"}},
		{"write", `{"path":"a.go","content":"secret\n"}`, map[string]string{"path": "a.go", "content": "7 bytes"}},
		{"edit", `{"path":"a.go","edits":[{"oldText":"x","newText":"y"},{"oldText":"p","newText":"q"}]}`, map[string]string{"path": "a.go", "edits": "2"}},
		{"bash", `{"command":"make test","timeout":30}`, map[string]string{"command": "make test", "timeout": "30"}},
		{"grep", `{"pattern":"TODO","path":"src","ignoreCase":true}`, map[string]string{"pattern": "TODO", "path": "src"}},
		{"bash", `{"command":"` + long + `"}`, map[string]string{"command": strings.Repeat("é", 100) + "…"}},
		{"docker_run", `{"image":"nginx","ports":["8080"],"detach":true}`, map[string]string{"image": "nginx", "detach": "true"}},
		{"ls", `{}`, nil},
		{"ls", `not json`, nil},
	} {
		assert.Equal(t, tc.want, ShortArgs(tc.tool, json.RawMessage(tc.args), nil), "%s %s", tc.tool, tc.args)
	}
}

// answer is a Caller that answers with a fixed result or error, after blocking until
// its context ends when block is set.
type answer struct {
	res   string
	err   error
	block bool
}

func (a answer) CallTool(ctx context.Context, _ mcpserver.Call) (json.RawMessage, error) {
	if a.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return json.RawMessage(a.res), a.err
}

func readAll(t *testing.T, path string) []Entry {
	t.Helper()
	var out []Entry
	require.NoError(t, Read(context.Background(), path, false, 0, func(e Entry) error { out = append(out, e); return nil }))
	return out
}

func TestCallerLogsEveryOutcome(t *testing.T) {
	l, err := Open(t.TempDir(), "pi-sbx-1-abc")
	require.NoError(t, err)
	tick := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	l.Now = func() time.Time { tick = tick.Add(1500 * time.Microsecond); return tick }
	var logErrs []error
	onErr := func(err error) { logErrs = append(logErrs, err) }
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name    string
		tool    string
		caller  answer
		ctx     context.Context
		outcome string
		files   []string
		errText string
	}{
		{"ok write", "write", answer{res: `{"content":[{"type":"text","text":"Successfully wrote 3 bytes to a.txt"}]}`}, context.Background(), "ok", []string{"a.txt"}, ""},
		{"tool error", "bash", answer{res: `{"content":[{"type":"text","text":"boom\n\nCommand exited with code 1"}],"isError":true}`}, context.Background(), "error", nil, "boom\n\nCommand exited with code 1"},
		{"thrown", "write", answer{res: `{"_meta":{"pi-sbx/thrown":true},"content":[{"type":"text","text":"EACCES"}],"isError":true}`}, context.Background(), "thrown", nil, "EACCES"},
		{"sandbox gone", "read", answer{err: errors.New("sandbox gone")}, context.Background(), "failed", nil, "sandbox gone"},
		{"cancelled", "bash", answer{block: true}, cancelled, "cancelled", nil, ""},
	} {
		c := l.Caller(tc.caller, tc.tool, onErr)
		_, _ = c.CallTool(tc.ctx, mcpserver.Call{Name: tc.tool, Args: json.RawMessage(`{"path":"a.txt","command":"x","content":"abc"}`), Client: "pi-sbx", ID: "call-" + tc.name})
		got := readAll(t, l.Path)
		require.NotEmpty(t, got, tc.name)
		e := got[len(got)-1]
		assert.Equal(t, tc.outcome, e.Outcome, tc.name)
		assert.Equal(t, tc.files, e.Files, tc.name)
		assert.Equal(t, tc.errText, e.Error, tc.name)
		assert.Equal(t, "pi-sbx", e.Client, tc.name)
		assert.Equal(t, "call-"+tc.name, e.CallID, tc.name)
		assert.Equal(t, tc.tool, e.Tool, tc.name)
		assert.InDelta(t, 1.5, e.Duration, 0.01, tc.name)
		assert.NotContains(t, e.Args, "content-value", tc.name)
	}
	assert.Empty(t, logErrs)
	b, err := os.ReadFile(l.Path)
	require.NoError(t, err)
	assert.NotContains(t, string(b), `"abc"`, "write's content is never logged")
	st, err := os.Stat(l.Path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
}

// TestShellLogsItsCommand: a command of pi-sbx-backend shell, which never passes through
// serve's routes, is an entry of client and tool shell with its command line, its
// outcome from the exit status (or that it could not run) and its duration.
func TestShellLogsItsCommand(t *testing.T) {
	l, err := Open(t.TempDir(), "pi-sbx-1-abc")
	require.NoError(t, err)
	start := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	l.Now = func() time.Time { return start.Add(2500 * time.Microsecond) }
	for _, tc := range []struct {
		name, command    string
		code             int
		runErr           error
		outcome, errText string
	}{
		{"ok", "sh -c echo s > shell.txt", 0, nil, "ok", ""},
		{"exit status", "false", 3, nil, "error", "exit status 3"},
		{"did not run", "(login shell)", 0, errors.New("sandbox gone"), "failed", "sandbox gone"},
		{"long", strings.Repeat("x", 300), 0, nil, "ok", ""},
	} {
		require.NoError(t, l.Shell(tc.command, start, tc.code, tc.runErr), tc.name)
		got := readAll(t, l.Path)
		e := got[len(got)-1]
		assert.Equal(t, Entry{
			Time: start, Client: "shell", Tool: "shell",
			Args:    map[string]string{"command": cut(tc.command)},
			Outcome: tc.outcome, Error: tc.errText, Duration: 2.5,
		}, e, tc.name)
	}
}

// TestConcurrentCallsLogWholeLines: hundreds of calls at once, from two Logs on the same
// file (two serve processes of one sandbox), each an entry of its own, whole.
func TestConcurrentCallsLogWholeLines(t *testing.T) {
	dir := t.TempDir()
	a, err := Open(dir, "s")
	require.NoError(t, err)
	b, err := Open(dir, "s")
	require.NoError(t, err)
	ok := answer{res: `{"content":[]}`}
	var wg sync.WaitGroup
	for i := range 400 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := a
			if i%2 == 1 {
				l = b
			}
			_, err := l.Caller(ok, "bash", func(err error) { t.Error(err) }).CallTool(context.Background(),
				mcpserver.Call{Args: json.RawMessage(fmt.Sprintf(`{"command":"echo %d %s"}`, i, strings.Repeat("x", 150))), ID: fmt.Sprint(i)})
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	got := readAll(t, a.Path)
	require.Len(t, got, 400)
	seen := map[string]bool{}
	for _, e := range got {
		seen[e.CallID] = true
		assert.True(t, strings.HasPrefix(e.Args["command"], "echo "+e.CallID+" "), e.Args["command"])
	}
	assert.Len(t, seen, 400)
}

func TestRotation(t *testing.T) {
	l, err := Open(t.TempDir(), "s")
	require.NoError(t, err)
	l.Max = 2000
	for i := range 50 {
		require.NoError(t, l.Append(Entry{Tool: "read", CallID: fmt.Sprint(i), Outcome: "ok", Args: map[string]string{"path": strings.Repeat("p", 40)}}))
	}
	for _, p := range []string{l.Path, l.Path + ".1"} {
		st, err := os.Stat(p)
		require.NoError(t, err)
		assert.LessOrEqual(t, st.Size(), int64(2000), p)
	}
	got := readAll(t, l.Path)
	require.NotEmpty(t, got)
	assert.Equal(t, "49", got[len(got)-1].CallID, "the newest entry is last")
	for i := 1; i < len(got); i++ {
		var prev, cur int
		fmt.Sscan(got[i-1].CallID, &prev)
		fmt.Sscan(got[i].CallID, &cur)
		assert.Equal(t, prev+1, cur, "oldest first, nothing between the two files lost")
	}
}

func TestReadSkipsACutLineAndFollows(t *testing.T) {
	l, err := Open(t.TempDir(), "s")
	require.NoError(t, err)
	require.NoError(t, l.Append(Entry{Tool: "ls", Outcome: "ok", CallID: "1"}))
	// A writer killed mid-line leaves half an entry; the next one still starts a line.
	f, err := os.OpenFile(l.Path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"time":"2026-12-05T10:00:00Z","tool":"re` + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := make(chan Entry, 10)
	done := make(chan error, 1)
	go func() {
		done <- Read(ctx, l.Path, true, 10*time.Millisecond, func(e Entry) error { got <- e; return nil })
	}()
	assert.Equal(t, "1", (<-got).CallID)
	require.NoError(t, l.Append(Entry{Tool: "ls", Outcome: "ok", CallID: "2"}))
	assert.Equal(t, "2", (<-got).CallID, "follow sees a new entry")
	cancel()
	require.NoError(t, <-done)
}

func TestOpenRefusesBadNames(t *testing.T) {
	for _, name := range []string{"", "../x", "a/b", ".hidden"} {
		_, err := Open(t.TempDir(), name)
		assert.Error(t, err, name)
	}
	err := Read(context.Background(), filepath.Join(t.TempDir(), "none.jsonl"), false, 0, func(Entry) error { return nil })
	assert.ErrorContains(t, err, "no audit log at")
}

func TestRoutesWrapEveryCaller(t *testing.T) {
	l, err := Open(t.TempDir(), "s")
	require.NoError(t, err)
	routes := l.Routes(mcpserver.Routes(tools.Pi(), answer{res: `{"content":[]}`}), nil)
	require.Len(t, routes, len(tools.Pi()))
	for _, r := range routes {
		_, err := r.Caller.CallTool(context.Background(), mcpserver.Call{Args: json.RawMessage(`{}`)})
		require.NoError(t, err)
	}
	var names []string
	for _, e := range readAll(t, l.Path) {
		names = append(names, e.Tool)
	}
	for _, tl := range tools.Pi() {
		assert.Contains(t, names, tl.Name)
	}
}
