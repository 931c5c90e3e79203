//go:build e2e

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// termWorld is a serve offering the terminal tools, on a sandbox of the test's own.
type termWorld struct {
	*world
	cs  *mcp.ClientSession
	box string
}

// termDetails is the terminal tools' structuredContent.
type termDetails struct {
	SessionID  int    `json:"session_id"`
	Running    bool   `json:"running"`
	ExitCode   *int   `json:"exit_code"`
	TimedOut   bool   `json:"timed_out"`
	Matched    *bool  `json:"matched"`
	Offset     int64  `json:"offset"`
	NextOffset int64  `json:"next_offset"`
	TotalBytes int64  `json:"total_bytes"`
	LogPath    string `json:"log_path"`
}

// newTermWorld starts `serve --tools +terminal --details structured` (with args) on a pinned sandbox h20t-….
func newTermWorld(t *testing.T, args ...string) *termWorld {
	w := newWorld(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	box := "h20t-" + hex.EncodeToString(b[:])
	w.create(box)
	cs, _, _ := w.serve(nil, append([]string{"--tools", "+terminal", "--details", "structured"}, args...), "DOCKER_SANDBOX="+box)
	return &termWorld{world: w, cs: cs, box: box}
}

// call calls a terminal tool and returns its text and details; a tool error fails the test.
func (tw *termWorld) call(t *testing.T, name string, args map[string]any) (string, termDetails) {
	t.Helper()
	var d termDetails
	return tw.callInto(t, name, args, &d), d
}

// callInto calls a tool, decodes its structuredContent into details and returns its
// text; a tool error fails the test.
func (tw *termWorld) callInto(t *testing.T, name string, args map[string]any, details any) string {
	t.Helper()
	res, err := tw.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "%s %v", name, args)
	require.False(t, res.IsError, "%s %v: %s", name, args, text(res))
	b, _ := json.Marshal(res.StructuredContent)
	require.NoError(t, json.Unmarshal(b, details))
	return text(res)
}

// callErr calls a tool that must fail, and returns its message.
func (tw *termWorld) callErr(t *testing.T, name string, args map[string]any) string {
	t.Helper()
	res, err := tw.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	require.True(t, res.IsError, "%s %v: %s", name, args, text(res))
	return text(res)
}

// waitForWaiting polls list_sessions until exactly want calls wait on session id.
func (tw *termWorld) waitForWaiting(t *testing.T, id, want int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var d struct {
			Sessions []struct {
				SessionID int `json:"session_id"`
				Waiting   int `json:"waiting"`
			} `json:"sessions"`
		}
		txt := tw.callInto(t, tools.ListSessionsName, map[string]any{}, &d)
		waiting := -1
		for _, s := range d.Sessions {
			if s.SessionID == id {
				waiting = s.Waiting
			}
		}
		require.NotEqual(t, -1, waiting, "session %d is not listed: %s", id, txt)
		if waiting == want {
			return
		}
		require.True(t, time.Now().Before(deadline), "session %d: %d calls wait on it after 30s, not %d", id, waiting, want)
	}
}

// output is the part of a reply after "Output:\n".
func output(text string) string {
	_, out, _ := strings.Cut(text, "Output:\n")
	return out
}

// TestTerminalToolsListedOnlyOnRequest: the terminal tools are in tools/list with
// --tools +terminal (their resize method is not), and only then; pi's seven stay.
func TestTerminalToolsListedOnlyOnRequest(t *testing.T) {
	names := func(cs *mcp.ClientSession) []string {
		list, err := cs.ListTools(context.Background(), nil)
		require.NoError(t, err)
		var n []string
		for _, tl := range list.Tools {
			n = append(n, tl.Name)
		}
		return n
	}
	tw := newTermWorld(t)
	with := names(tw.cs)
	for _, tl := range tools.Terminal() {
		assert.Contains(t, with, tl.Name)
	}
	assert.NotContains(t, with, tools.TerminalResizeName, "resize is a serve method, not a tool")
	for _, tl := range tools.Pi() {
		assert.Contains(t, with, tl.Name)
	}
	plain, _, _ := tw.serve(nil, nil)
	without := names(plain)
	for _, tl := range append(tools.Terminal(), tools.TerminalResize()) {
		assert.NotContains(t, without, tl.Name, "not offered unless asked for")
	}
	res, err := plain.CallTool(context.Background(), &mcp.CallToolParams{Name: tools.ExecCommandName, Arguments: map[string]any{"cmd": "touch ran"}})
	if err == nil {
		assert.True(t, res.IsError, "nor callable: %s", text(res))
	}
	assert.NoFileExists(t, tw.ws+"/ran")
	env, _, _ := tw.serve(nil, nil, "PI_SBX_TOOLS=+terminal")
	assert.Contains(t, names(env), tools.ExecCommandName, "PI_SBX_TOOLS=+terminal asks too")
}

// transports are serve's two ways to the agent: the session table lives in the agent on
// the persistent channel, in the terminal server for per-call agents.
var transports = []string{"persistent", "per-call"}

// TestTerminalCases: the pitfalls other terminals' users report, each through serve
// with real processes in the sandbox, over both transports.
func TestTerminalCases(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) { terminalCases(t, newTermWorld(t, "--transport", transport)) })
	}
}

func terminalCases(t *testing.T, tw *termWorld) {
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"hung stdin: a command reading stdin gets end-of-file", func(t *testing.T) {
			// Returned at the exit: a read waiting for input would still run at the yield.
			txt, d := tw.call(t, tools.ExecCommandName, map[string]any{"cmd": "cat; read x; echo read-ended:$?", "yield_time_ms": 30000})
			require.NotNil(t, d.ExitCode, txt)
			assert.Equal(t, 0, *d.ExitCode)
			assert.False(t, d.Running)
			assert.Equal(t, "read-ended:1\n", output(txt))
		}},
		{"interactive prompt answered with write_stdin", func(t *testing.T) {
			txt, d := tw.call(t, tools.ExecCommandName, map[string]any{"cmd": `read -p "Name? " n; echo "hello $n"`, "tty": true, "yield_time_ms": 1000})
			require.True(t, d.Running, txt)
			assert.Contains(t, output(txt), "Name? ")
			assert.Contains(t, txt, fmt.Sprintf("Process running with session ID %d", d.SessionID))
			txt, d2 := tw.call(t, tools.WriteStdinName, map[string]any{"session_id": d.SessionID, "chars": "bob\n", "yield_time_ms": 5000})
			require.NotNil(t, d2.ExitCode, txt)
			assert.Equal(t, 0, *d2.ExitCode)
			assert.Contains(t, output(txt), "hello bob")
			assert.NotContains(t, output(txt), "Name?", "only the output since the last read")
		}},
		{"a REPL: an interactive shell typed into, line by line", func(t *testing.T) {
			txt, d := tw.call(t, tools.ExecCommandName, map[string]any{"cmd": "PS1='repl> ' exec sh -i", "tty": true, "yield_time_ms": 500})
			require.True(t, d.Running, txt)
			txt, _ = tw.call(t, tools.WriteStdinName, map[string]any{"session_id": d.SessionID, "chars": "echo $((6*7))\n", "yield_time_ms": 1000})
			assert.Contains(t, output(txt), "42\n")
			txt, d2 := tw.call(t, tools.WriteStdinName, map[string]any{"session_id": d.SessionID, "chars": "exit 4\n", "yield_time_ms": 5000})
			require.NotNil(t, d2.ExitCode, txt)
			assert.Equal(t, 4, *d2.ExitCode)
		}},
		{"orphaned grandchild holding the pipe does not block the exit", func(t *testing.T) {
			// An exit code at all says the exit did not wait for the orphan (600 s, past the yield).
			txt, d := tw.call(t, tools.ExecCommandName, map[string]any{"cmd": "sleep 600 & echo $! > orphan.pid; echo parent-done", "yield_time_ms": 30000})
			require.NotNil(t, d.ExitCode, txt)
			assert.Equal(t, 0, *d.ExitCode)
			assert.Equal(t, "parent-done\n", output(txt))
			proc := tw.sandboxProc(t, tw.box, tw.waitPid(t, tw.box, tw.ws+"/orphan.pid"))
			assert.True(t, proc.alive(t), "the grandchild runs on")
			tw.call(t, tools.KillSessionName, map[string]any{"session_id": d.SessionID})
			proc.waitExit(t, "kill_session reaches the group")
		}},
		{"output of a process that finished between calls is not lost", func(t *testing.T) {
			txt, d := tw.call(t, tools.ExecCommandName, map[string]any{"cmd": "sleep 1; echo late-line; exit 3", "yield_time_ms": 250})
			require.True(t, d.Running, txt)
			time.Sleep(2 * time.Second) // it finishes while nobody is asking
			txt, d2 := tw.call(t, tools.ReadOutputName, map[string]any{"session_id": d.SessionID})
			require.NotNil(t, d2.ExitCode, txt)
			assert.Equal(t, 3, *d2.ExitCode)
			assert.Equal(t, "late-line\n", output(txt))
			txt, d3 := tw.call(t, tools.ReadOutputName, map[string]any{"session_id": d.SessionID, "since_offset": 0})
			assert.Equal(t, "late-line\n", output(txt), "since_offset 0 reads it again")
			assert.Equal(t, int64(len("late-line\n")), d3.NextOffset)
		}},
		{"a progress bar's carriage returns collapse to its last state", func(t *testing.T) {
			cmd := `for i in $(seq 0 5 100); do printf '\r\033[32m[%-20s]\033[0m %3d%%' $(printf '#%.0s' $(seq 0 5 $i)) $i; done; printf '\ndone\n'`
			txt, d := tw.call(t, tools.ExecCommandName, map[string]any{"cmd": cmd, "tty": true})
			require.NotNil(t, d.ExitCode, txt)
			assert.Equal(t, "[#####################] 100%\ndone\n", output(txt))
			assert.Greater(t, d.TotalBytes, int64(400), "the raw log has every redraw")
			raw, code := tw.sim("exec", tw.box, "cat", d.LogPath)
			require.Zero(t, code, raw)
			assert.Contains(t, raw, "\x1b[32m", "the log is raw")
			assert.Equal(t, strings.Count(raw, "\r")-strings.Count(raw, "\r\n"), 21, "every redraw is in the log")
		}},
		{"until_regex returns on the match", func(t *testing.T) {
			txt, d := tw.call(t, tools.ExecCommandName, map[string]any{"cmd": "sleep 1; echo 'Server listening on :8080'; sleep 600", "yield_time_ms": 250})
			require.True(t, d.Running, txt)
			txt, d2 := tw.call(t, tools.ReadOutputName, map[string]any{"session_id": d.SessionID, "until_regex": "listening on :\\d+", "wait_ms": 120000})
			require.NotNil(t, d2.Matched) // matched and running: returned at the match, not at wait_ms
			assert.True(t, *d2.Matched)
			assert.True(t, d2.Running)
			assert.Contains(t, output(txt), "Server listening on :8080")
			tw.call(t, tools.KillSessionName, map[string]any{"session_id": d.SessionID, "signal": "KILL"})
		}},
		{"until_regex not seen: the wait ends at wait_ms, unmatched", func(t *testing.T) {
			_, d := tw.call(t, tools.ExecCommandName, map[string]any{"cmd": "echo nothing; sleep 600", "yield_time_ms": 250})
			txt, d2 := tw.call(t, tools.ReadOutputName, map[string]any{"session_id": d.SessionID, "until_regex": "never", "wait_ms": 300})
			require.NotNil(t, d2.Matched)
			assert.False(t, *d2.Matched)
			assert.Contains(t, txt, `Pattern "never" not seen`)
			tw.call(t, tools.KillSessionName, map[string]any{"session_id": d.SessionID, "signal": "KILL"})
		}},
		{"kill_session kills the whole process group", func(t *testing.T) {
			_, d := tw.call(t, tools.ExecCommandName, map[string]any{"cmd": "trap '' TERM; sleep 600 & echo $! > group.pid; wait", "yield_time_ms": 250})
			proc := tw.sandboxProc(t, tw.box, tw.waitPid(t, tw.box, tw.ws+"/group.pid"))
			require.True(t, proc.alive(t))
			txt, d2 := tw.call(t, tools.KillSessionName, map[string]any{"session_id": d.SessionID})
			require.NotNil(t, d2.ExitCode, txt)
			assert.False(t, d2.Running)
			proc.waitExit(t, "the child in the group is gone")
		}},
		{"timeout_s kills it", func(t *testing.T) {
			txt, d := tw.call(t, tools.ExecCommandName, map[string]any{"cmd": "sleep 600", "timeout_s": 0.5, "yield_time_ms": 20000})
			require.NotNil(t, d.ExitCode, txt)
			assert.True(t, d.TimedOut)
			assert.Equal(t, 137, *d.ExitCode)
		}},
		{"write_stdin to a pipe session says how to get a terminal", func(t *testing.T) {
			_, d := tw.call(t, tools.ExecCommandName, map[string]any{"cmd": "sleep 600", "yield_time_ms": 250})
			msg := tw.callErr(t, tools.WriteStdinName, map[string]any{"session_id": d.SessionID, "chars": "x"})
			assert.Contains(t, msg, "tty:true")
			_, d2 := tw.call(t, tools.WriteStdinName, map[string]any{"session_id": d.SessionID, "chars": ""})
			assert.True(t, d2.Running, "empty chars polls")
			tw.call(t, tools.KillSessionName, map[string]any{"session_id": d.SessionID, "signal": "KILL"})
		}},
		{"ctrl-c through write_stdin", func(t *testing.T) {
			_, d := tw.call(t, tools.ExecCommandName, map[string]any{"cmd": "sleep 600", "tty": true, "yield_time_ms": 250})
			txt, d2 := tw.call(t, tools.WriteStdinName, map[string]any{"session_id": d.SessionID, "chars": "\u0003", "yield_time_ms": 5000})
			require.NotNil(t, d2.ExitCode, txt)
			assert.Equal(t, 130, *d2.ExitCode)
		}},
		{"the command holds no descriptor of the agent's", func(t *testing.T) {
			for _, tty := range []bool{false, true} {
				txt, d := tw.call(t, tools.ExecCommandName, map[string]any{"cmd": "exec ls -1 /proc/self/fd", "tty": tty})
				require.NotNil(t, d.ExitCode, txt)
				assert.Equal(t, "0\n1\n2\n3\n", output(txt), "tty %v: its three and ls's own directory", tty)
				txt, _ = tw.call(t, tools.ExecCommandName, map[string]any{"cmd": "readlink /proc/self/fd/0", "tty": tty})
				if tty {
					assert.Regexp(t, `^/dev/pts/\d+\n$`, output(txt))
				} else {
					assert.Equal(t, "/dev/null\n", output(txt))
				}
			}
		}},
		{"pi's truncation: the newest lines, the log named", func(t *testing.T) {
			txt, d := tw.call(t, tools.ExecCommandName, map[string]any{"cmd": "seq 1 5000"})
			require.NotNil(t, d.ExitCode, txt)
			out := output(txt)
			assert.True(t, strings.HasPrefix(out, "3001\n"), out[:20])
			assert.True(t, strings.HasSuffix(out, "5000\n\n[Showing the last 2000 lines. Full output: "+d.LogPath+"]"), out[len(out)-100:])
			txt, _ = tw.call(t, tools.ReadOutputName, map[string]any{"session_id": d.SessionID, "since_offset": 0, "tail_lines": 3})
			assert.Equal(t, "4998\n4999\n5000\n", output(txt))
			txt, _ = tw.call(t, tools.ReadOutputName, map[string]any{"session_id": d.SessionID, "since_offset": 0, "max_output_tokens": 5})
			assert.True(t, strings.HasPrefix(output(txt), "4997\n4998\n4999\n5000\n\n[Showing the last 4 lines (20B limit)"), output(txt))
		}},
		{"unknown session", func(t *testing.T) {
			msg := tw.callErr(t, tools.ReadOutputName, map[string]any{"session_id": 12345, "wait_ms": 300000})
			assert.Contains(t, msg, "unknown session 12345: finished sessions are kept 10 minutes after they exit")
		}},
		{"list_sessions", func(t *testing.T) {
			_, d := tw.call(t, tools.ExecCommandName, map[string]any{"cmd": "sleep 600 # listed", "yield_time_ms": 250})
			txt, _ := tw.call(t, tools.ListSessionsName, map[string]any{})
			assert.Regexp(t, regexp.MustCompile(fmt.Sprintf(`(?m)^%d\trunning\t.*sleep 600 # listed$`, d.SessionID)), txt)
			tw.call(t, tools.KillSessionName, map[string]any{"session_id": d.SessionID, "signal": "KILL"})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}

// TestTerminalCancelStopsTheWaitNotTheProcess: a cancelled read_output returns at once
// and the command runs on; the next read sees its output.
func TestTerminalCancelStopsTheWaitNotTheProcess(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) { cancelStopsTheWait(t, newTermWorld(t, "--transport", transport)) })
	}
}

func cancelStopsTheWait(t *testing.T, tw *termWorld) {
	// The command ends when the test says so (not after a time a loaded machine could pass
	// before the test looks).
	_, d := tw.call(t, tools.ExecCommandName, map[string]any{"cmd": "echo $$ > shell.pid; until [ -e proceed ]; do sleep 0.05; done; echo after", "yield_time_ms": 250})
	proc := tw.sandboxProc(t, tw.box, tw.waitPid(t, tw.box, tw.ws+"/shell.pid"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := tw.cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.ReadOutputName, Arguments: map[string]any{
			"session_id": d.SessionID, "until_regex": "never", "wait_ms": 300000}})
		done <- err
	}()
	tw.waitForWaiting(t, d.SessionID, 1) // the read waits in the VM
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled wait did not return")
	}
	assert.True(t, proc.alive(t), "the command runs on")
	// The client's call returns as it sends its cancellation; the session hears of it a
	// moment later. Until then the wait would take the output as the command ends, and
	// the next read would find nothing new: the command ends only once it has.
	tw.waitForWaiting(t, d.SessionID, 0)
	require.NoError(t, os.WriteFile(tw.ws+"/proceed", nil, 0o644))
	txt, d2 := tw.call(t, tools.ReadOutputName, map[string]any{"session_id": d.SessionID, "wait_ms": 120000})
	require.NotNil(t, d2.ExitCode, txt)
	assert.Equal(t, "after\n", output(txt))
}

// TestTerminalUnknownAfterRestart: after the sandbox restarts (sbx stop, then the next
// call starts it), an old session id is unknown at once — no hang.
func TestTerminalUnknownAfterRestart(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) { unknownAfterRestart(t, newTermWorld(t, "--transport", transport)) })
	}
}

func unknownAfterRestart(t *testing.T, tw *termWorld) {
	_, d := tw.call(t, tools.ExecCommandName, map[string]any{"cmd": "sleep 600", "yield_time_ms": 250})
	out, code := tw.sim("stop", tw.box)
	require.Zero(t, code, out)
	var msg string
	for i := 0; i < 2; i++ { // the first call may find the channel gone; the next restarts it
		res, err := tw.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tools.ReadOutputName, Arguments: map[string]any{
			"session_id": d.SessionID, "wait_ms": 300000}})
		require.NoError(t, err)
		require.True(t, res.IsError, text(res))
		if msg = text(res); strings.Contains(msg, "unknown session") {
			break
		}
	}
	assert.Contains(t, msg, fmt.Sprintf("unknown session %d", d.SessionID)) // an answer, not the end of wait_ms
}

// TestTerminalManySessions: 120 sessions at once, each answered with its own output.
func TestTerminalManySessions(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) { manySessions(t, newTermWorld(t, "--transport", transport)) })
	}
}

func manySessions(t *testing.T, tw *termWorld) {
	const n = 120
	ids := make([]int, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := tw.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tools.ExecCommandName, Arguments: map[string]any{
				"cmd": fmt.Sprintf("echo start-%d; read line; echo got-$line-%d", i, i), "tty": true, "yield_time_ms": 250}})
			if err != nil || res.IsError {
				errs <- fmt.Errorf("exec %d: %v %s", i, err, text(res))
				return
			}
			var d termDetails
			b, _ := json.Marshal(res.StructuredContent)
			_ = json.Unmarshal(b, &d)
			ids[i] = d.SessionID
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	txt, _ := tw.call(t, tools.ListSessionsName, map[string]any{})
	assert.GreaterOrEqual(t, strings.Count(txt, "\trunning\t"), n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := tw.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tools.WriteStdinName, Arguments: map[string]any{
				"session_id": ids[i], "chars": "x\n", "yield_time_ms": 20000}})
			if assert.NoError(t, err) && assert.False(t, res.IsError, text(res)) {
				assert.Contains(t, text(res), fmt.Sprintf("got-x-%d", i))
				assert.Contains(t, text(res), "Process exited with code 0")
			}
		}()
	}
	wg.Wait()
}

// TestTerminalStreamsRawOutput: while exec_command waits, the raw bytes (escape
// sequences and all) stream as progress; the reply is the rendered text.
func TestTerminalStreamsRawOutput(t *testing.T) {
	w := newWorld(t)
	var mu sync.Mutex
	var streamed strings.Builder
	var last float64
	cs, _, _ := w.serve(&mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		defer mu.Unlock()
		streamed.WriteString(req.Params.Message)
		last = req.Params.Progress
	}}, []string{"--tools", "+terminal"})
	params := &mcp.CallToolParams{Name: tools.ExecCommandName, Arguments: map[string]any{
		"cmd": `printf 'step 1\r'; sleep 0.3; printf '\033[1mstep 2\033[0m\n'`, "tty": true}}
	params.SetProgressToken("term")
	res, err := cs.CallTool(context.Background(), params)
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "step 2\n", output(text(res)))
	want := "step 1\r\x1b[1mstep 2\x1b[0m\r\n"
	got := func() (string, float64) { mu.Lock(); defer mu.Unlock(); return streamed.String(), last }
	assert.Eventually(t, func() bool { s, _ := got(); return s == want }, 5*time.Second, 10*time.Millisecond, "raw output streamed")
	_, total := got()
	assert.Equal(t, float64(len(want)), total, "progress counts raw bytes")
}

// TestTerminalResize: pi_sbx_terminal_resize resizes a session's terminal; its command
// sees the new size (SIGWINCH).
func TestTerminalResize(t *testing.T) {
	tw := newTermWorld(t)
	_, d := tw.call(t, tools.ExecCommandName, map[string]any{"cmd": `trap 'stty size' WINCH; stty size; while :; do sleep 0.05; done`,
		"tty": true, "cols": 100, "rows": 30, "yield_time_ms": 500})
	require.True(t, d.Running)
	tw.call(t, tools.TerminalResizeName, map[string]any{"session_id": d.SessionID, "cols": 132, "rows": 43})
	txt, _ := tw.call(t, tools.ReadOutputName, map[string]any{"session_id": d.SessionID, "since_offset": 0, "until_regex": "43 132", "wait_ms": 20000})
	assert.Equal(t, "30 100\n43 132\n", output(txt))
	msg := tw.callErr(t, tools.TerminalResizeName, map[string]any{"session_id": 1, "cols": 10, "rows": 10})
	assert.Contains(t, msg, "unknown session 1")
	tw.call(t, tools.KillSessionName, map[string]any{"session_id": d.SessionID, "signal": "KILL"})
}

// TestTerminalSessionsDieWithTheirAgent: when the process holding the session table dies
// (the agent on the persistent channel, the terminal server for per-call agents), its
// sessions' commands die with it, and their ids are unknown to the next one.
func TestTerminalSessionsDieWithTheirAgent(t *testing.T) {
	holder := map[string]string{"persistent": "pi-sbx-agent-.* agent", "per-call": "pi-sbx-agent-.* terminal-server"}
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			tw := newTermWorld(t, "--transport", transport)
			var procs []*sandboxProc
			var last int
			for i, tty := range []bool{false, true} {
				file := fmt.Sprintf("%s/die%d.pid", tw.ws, i)
				_, d := tw.call(t, tools.ExecCommandName, map[string]any{"cmd": "echo $$ > " + file + "; sleep 600", "tty": tty, "yield_time_ms": 250})
				procs = append(procs, tw.sandboxProc(t, tw.box, tw.waitPid(t, tw.box, file)))
				last = d.SessionID
			}
			out, code := tw.sim("exec", tw.box, "pkill", "-9", "-f", holder[transport])
			require.Zero(t, code, out)
			for i, proc := range procs {
				proc.waitExit(t, fmt.Sprintf("session %d (tty %v) died with its table", i, i == 1))
			}
			var msg string
			for i := 0; i < 2; i++ { // the first call may find the channel gone; the next restarts it
				res, err := tw.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tools.ReadOutputName, Arguments: map[string]any{
					"session_id": last, "wait_ms": 300000}})
				require.NoError(t, err)
				require.True(t, res.IsError, text(res))
				if msg = text(res); strings.Contains(msg, "unknown session") {
					break
				}
			}
			assert.Contains(t, msg, fmt.Sprintf("unknown session %d", last))
		})
	}
}

// TestTerminalSessionCap: the agent holds at most terminal.DefaultMaxSessions sessions:
// with that many running, one more is refused and starts nothing; a finished one makes
// room again.
func TestTerminalSessionCap(t *testing.T) {
	tw := newTermWorld(t)
	const max = 256 // terminal.DefaultMaxSessions, which docs/terminal-tools.md states
	ids := make([]int, max)
	var wg sync.WaitGroup
	for i := range max {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := tw.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tools.ExecCommandName, Arguments: map[string]any{
				"cmd": "sleep 600", "yield_time_ms": 250}})
			if assert.NoError(t, err) && assert.False(t, res.IsError, text(res)) {
				var d termDetails
				b, _ := json.Marshal(res.StructuredContent)
				_ = json.Unmarshal(b, &d)
				ids[i] = d.SessionID
			}
		}()
	}
	wg.Wait()
	msg := tw.callErr(t, tools.ExecCommandName, map[string]any{"cmd": "touch over-the-cap"})
	assert.Contains(t, msg, "too many sessions: 256 are running")
	assert.NoFileExists(t, tw.ws+"/over-the-cap")
	tw.call(t, tools.KillSessionName, map[string]any{"session_id": ids[0], "signal": "KILL"})
	txt, d := tw.call(t, tools.ExecCommandName, map[string]any{"cmd": "echo room"})
	require.NotNil(t, d.ExitCode, txt)
	assert.Equal(t, "room\n", output(txt))
	msg = tw.callErr(t, tools.ReadOutputName, map[string]any{"session_id": ids[0]})
	assert.Contains(t, msg, "unknown session", "the finished session made the room")
}
