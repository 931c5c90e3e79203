//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const rawInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
`

// TestServeScriptWithOddIDsEnds is `printf '…' | pi-sbx-backend serve` with ids of every
// form a client may send: serve answers each (the same id, or an Invalid Request error
// echoing the id exactly) and exits at the end of its input.
func TestServeScriptWithOddIDsEnds(t *testing.T) {
	w := newWorld(t)
	read := `"method":"tools/call","params":{"name":"read","arguments":{"path":"README.md"}}}`
	input := rawInit + strings.Join([]string{
		`{"jsonrpc":"2.0","id":3.0,` + read,
		`{"jsonrpc":"2.0","id":2e0,` + read,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":18446744073709551616,` + read,
		`{"jsonrpc":"2.0","id":-18446744073709551616,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a\u0062\n",` + read,
		`{"jsonrpc":"2.0","id":"\ud800",` + read,
		`{"jsonrpc":"2.0","id":7,` + read,
	}, "\n") + "\n"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, backendBin, "serve")
	cmd.Dir, cmd.Env = w.ws, w.env()
	cmd.Stdin = strings.NewReader(input)
	out, err := cmd.Output()
	require.NoError(t, err, "serve exits by itself, with status 0, at the end of its input: %s", stderrOf(err))
	require.NoError(t, ctx.Err(), "serve did not hang")

	replies := map[string]map[string]json.RawMessage{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		replies[string(m["id"])] = m
	}
	assert.Len(t, replies, 9, "one answer per request:\n%s", out)
	for _, id := range []string{`3.0`, `2e0`, `1.5`, `18446744073709551616`, `-18446744073709551616`, `"\ud800"`} {
		require.Contains(t, replies, id, "the answer echoes id %s exactly", id)
		assert.Contains(t, string(replies[id]["error"]), `"code":-32600`, id)
	}
	for _, id := range []string{`7`, `"ab\n"`} {
		require.Contains(t, replies, id)
		assert.Contains(t, string(replies[id]["result"]), "hello world", id)
	}
}

// TestServeDoesNotAnswerACancelledCall: the client cancels a running bash call; serve
// sends no answer for it (MCP: the receiver should not respond), logs no warning, and
// the agent in the VM gives none either (the channel warns of an answer to a call it
// cancelled).
func TestServeDoesNotAnswerACancelledCall(t *testing.T) {
	w := newWorld(t)
	cmd := exec.Command(backendBin, "serve", "--log-level", "debug")
	cmd.Dir, cmd.Env = w.ws, w.env()
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := &testbin.SyncBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	send := func(s string) { _, err := io.WriteString(stdin, s); require.NoError(t, err) }
	waitFor := func(id string) []string {
		var seen []string
		for {
			select {
			case l, ok := <-lines:
				require.True(t, ok, "serve ended before answering %s: %v", id, seen)
				seen = append(seen, l)
				var m map[string]json.RawMessage
				require.NoError(t, json.Unmarshal([]byte(l), &m))
				if string(m["id"]) == id {
					return seen
				}
			case <-time.After(90 * time.Second):
				t.Fatalf("no answer %s; got %v", id, seen)
			}
		}
	}
	send(rawInit)
	waitFor("1")
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ls","arguments":{}}}` + "\n")
	waitFor("2") // the sandbox and the agent are up
	send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo up > up.txt; sleep 30"}}}` + "\n")
	require.Eventually(t, func() bool { return strings.Contains(w.local("read", `{"path":"up.txt"}`), "up") }, 30*time.Second, 50*time.Millisecond)
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"user"}}` + "\n")
	time.Sleep(time.Second) // time for a (wrong) answer to arrive
	send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo next"}}}` + "\n")
	seen := waitFor("6")
	stdin.Close()
	for l := range lines {
		seen = append(seen, l)
	}
	for _, l := range seen {
		assert.NotContains(t, l, `"id":5`, "no answer to the cancelled call")
	}
	log := stderr.String()
	assert.NotContains(t, log, "level=WARN")
	assert.NotContains(t, log, "context canceled")
}

// TestServeLargeWriteAndEdit: a write and an edit whose texts are far over the size the
// transports set aside arrive in the workspace exactly, through serve and the
// agent channel.
func TestServeLargeWriteAndEdit(t *testing.T) {
	w := newWorld(t)
	cs, _, _ := w.serve(nil, nil)
	big := strings.Repeat("func f() {\n\treturn \"x\\y\" // é 😀 \u2028\n}\n", 50000) // ~2 MB
	lit, err := json.Marshal(big)
	require.NoError(t, err)
	res := call(t, cs, "write", `{"path":"big.go","content":`+string(lit)+`}`)
	require.False(t, res.IsError, text(res))
	got, err := w.readWS(filepath.Join(w.ws, "big.go"))
	require.NoError(t, err)
	require.True(t, string(got) == big, "the file holds exactly the content sent")

	edited := "// head\n" + big
	newLit, _ := json.Marshal(edited)
	res = call(t, cs, "edit", `{"path":"big.go","edits":[{"oldText":`+string(lit)+`,"newText":`+string(newLit)+`}]}`)
	require.False(t, res.IsError, text(res))
	got, err = w.readWS(filepath.Join(w.ws, "big.go"))
	require.NoError(t, err)
	assert.True(t, string(got) == edited, "the edit's texts arrived exactly")
}
