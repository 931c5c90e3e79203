//go:build linux

package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
	"github.com/pi-sbx/pi-sbx-backend/internal/vm/vmagent"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/jsonwire"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

const initLines = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
`

// serveScript runs Serve on a fixed input (as `printf … | serve` does) and returns its
// output lines; it fails the test if serving does not end by itself.
func serveScript(t *testing.T, dir, input string) []string {
	t.Helper()
	return serveWith(t, newServer(t, &Local{Registry: vmagent.Default(), Cwd: dir}, Options{}), input)
}

func serveWith(t *testing.T, srv *Server, input string) []string {
	t.Helper()
	return serveFed(t, srv, func(feed io.Writer, _ *testbin.SyncBuffer) {
		_, err := io.WriteString(feed, input)
		require.NoError(t, err)
	})
}

// serveAfterInit is serveWith for calls the transport answers itself: they are sent
// once the initialize request is answered, as a client waits to (calls that arrive
// earlier go to the SDK).
func serveAfterInit(t *testing.T, srv *Server, calls string) []string {
	t.Helper()
	return serveFed(t, srv, func(feed io.Writer, out *testbin.SyncBuffer) {
		_, err := io.WriteString(feed, initLines)
		require.NoError(t, err)
		require.Eventually(t, func() bool { return strings.Contains(out.String(), `"id":"init"`) }, 10*time.Second, time.Millisecond)
		_, err = io.WriteString(feed, calls)
		require.NoError(t, err)
	})
}

// serveFed runs Serve on what feed writes (feed sees serve's output so far), then on its
// end, and returns serve's output lines; it fails the test if serving does not end by
// itself.
func serveFed(t *testing.T, srv *Server, feed func(in io.Writer, out *testbin.SyncBuffer)) []string {
	t.Helper()
	var out testbin.SyncBuffer
	in, w := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), srv, in, &out) }()
	feed(w, &out)
	w.Close()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not end at the end of its input; wrote so far:\n%s", out.String())
	}
	return strings.Split(strings.TrimSpace(out.String()), "\n")
}

// replyTo finds the reply whose raw id text is rawID.
func replyTo(t *testing.T, lines []string, rawID string) (map[string]json.RawMessage, bool) {
	t.Helper()
	for _, l := range lines {
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		if string(m["id"]) == rawID {
			return m, true
		}
	}
	return nil, false
}

// TestServeRequestIDs: every id form JSON-RPC allows (string, number, null, and what a
// client might send that is none of these). An id the SDK carries exactly is answered
// with the same value; any other is answered with an Invalid Request error whose id is
// the request's, byte for byte — never with a different id — and serve still ends
// after answering everything.
func TestServeRequestIDs(t *testing.T) {
	tests := []struct {
		name  string
		id    string
		reply string // the raw id of the answer; "" for no answer
		ok    bool   // answered with a result (else an Invalid Request error)
	}{
		{"zero", `0`, `0`, true},
		{"integer", `42`, `42`, true},
		{"negative", `-7`, `-7`, true},
		{"2^53", `9007199254740992`, `9007199254740992`, true},
		{"-2^53", `-9007199254740992`, `-9007199254740992`, true},
		{"string", `"abc"`, `"abc"`, true},
		{"empty string", `""`, `""`, true},
		{"string with escapes", `"a\"b\\c\n\t\/"`, `"a\"b\\c\n\t/"`, true},
		{"string with a unicode escape", `"a\u0062"`, `"ab"`, true},
		{"string with a surrogate pair", `"\ud83d\ude00"`, `"😀"`, true},
		{"string with raw UTF-8", `"日本"`, `"日本"`, true},
		{"string with a control escape", `"\u0001"`, `"\u0001"`, true},
		{"number with a fraction of zero", `3.0`, `3.0`, false},
		{"exponent", `2e0`, `2e0`, false},
		{"capital exponent", `1E3`, `1E3`, false},
		{"fraction", `1.5`, `1.5`, false},
		{"minus zero", `-0`, `-0`, false},
		{"2^53+1", `9007199254740993`, `9007199254740993`, false},
		{"2^64", `18446744073709551616`, `18446744073709551616`, false},
		{"big negative", `-99999999999999999999999`, `-99999999999999999999999`, false},
		{"lone high surrogate", `"\ud800"`, `"\ud800"`, false},
		{"lone low surrogate", `"x\udc00"`, `"x\udc00"`, false},
		{"object", `{"a":1}`, `null`, false},
		{"array", `[1]`, `null`, false},
		{"boolean", `true`, `null`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lines := serveScript(t, t.TempDir(), initLines+
				fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/list"}`, tc.id)+"\n"+
				`{"jsonrpc":"2.0","id":"after","method":"ping"}`+"\n")
			m, found := replyTo(t, lines, tc.reply)
			require.True(t, found, "an answer with id %s in:\n%s", tc.reply, strings.Join(lines, "\n"))
			if tc.ok {
				assert.Contains(t, string(m["result"]), `"tools"`)
			} else {
				var e jsonrpc.Error
				require.NoError(t, json.Unmarshal(m["error"], &e), "an error answer: %v", m)
				assert.Equal(t, int64(jsonrpc.CodeInvalidRequest), e.Code)
			}
			_, found = replyTo(t, lines, `"after"`)
			assert.True(t, found, "serving goes on")
			assert.Len(t, lines, 3, "one answer each to initialize, the call and the ping")
		})
	}
	// A null id makes a notification (JSON-RPC 2.0 discourages it): no answer, no hang.
	lines := serveScript(t, t.TempDir(), initLines+`{"jsonrpc":"2.0","id":null,"method":"ping"}`+"\n")
	assert.Len(t, lines, 1)
}

// TestTooDeepRequestsAreAnsweredWithTheirID: a request nested deeper than serve
// validates is refused as an Invalid Request carrying its id, wherever the id stands in
// the line; a line that gives no usable id is a parse error answered with null.
func TestTooDeepRequestsAreAnsweredWithTheirID(t *testing.T) {
	deep := strings.Repeat("[", 1100) + strings.Repeat("]", 1100)
	tests := []struct {
		name, line, reply string // reply: the raw id of the answer
	}{
		{"id before the deep value", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ls","arguments":{"x":` + deep + `}}}`, `5`},
		{"id after the deep value", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"ls","arguments":{"x":` + deep + `}},"id":"late"}`, `"late"`},
		{"string id with escapes", `{"id":"a\"b","jsonrpc":"2.0","method":"tools/list","params":{"x":` + deep + `}}`, `"a\"b"`},
		{"deep value in a string-looking member", `{"jsonrpc":"2.0","id":6,"method":"ping","params":{"s":"]]]","x":` + deep + `}}`, `6`},
		{"an id the SDK would round", `{"jsonrpc":"2.0","id":1.5,"method":"ping","params":` + deep + `}`, `null`},
		{"no method: not a request", `{"jsonrpc":"2.0","id":8,"result":` + deep + `}`, `null`},
		{"unbalanced after the deep value", `{"jsonrpc":"2.0","method":"ping","params":` + deep + `,"id":9`, `null`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lines := serveAfterInit(t, newServer(t, &Local{Registry: vmagent.Default(), Cwd: t.TempDir()}, Options{}),
				tc.line+"\n"+`{"jsonrpc":"2.0","id":"after","method":"ping"}`+"\n")
			m, found := replyTo(t, lines, tc.reply)
			require.True(t, found, "an answer with id %s in:\n%s", tc.reply, strings.Join(lines, "\n"))
			var e jsonrpc.Error
			require.NoError(t, json.Unmarshal(m["error"], &e), "an error answer: %v", m)
			want := int64(jsonrpc.CodeInvalidRequest)
			if tc.reply == `null` {
				want = jsonrpc.CodeParseError
			}
			assert.Equal(t, want, e.Code, e.Message)
			assert.Contains(t, e.Message, "nested deeper than 1000")
			_, found = replyTo(t, lines, `"after"`)
			assert.True(t, found, "serving goes on")
		})
	}
}

// TestServeDoesNotAnswerCancelledCalls: after notifications/cancelled the call's answer
// is not sent (MCP: a receiver should not respond to a cancelled request); the other
// calls are answered and serve ends.
func TestServeDoesNotAnswerCancelledCalls(t *testing.T) {
	dir := t.TempDir()
	lines := serveScript(t, dir, initLines+strings.Join([]string{
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo started > mark; sleep 60"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"user"}}`,
		`{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep 0.5; echo slow"}}}`,
	}, "\n")+"\n")
	_, answered := replyTo(t, lines, "3")
	assert.False(t, answered, "the cancelled call is not answered:\n%s", strings.Join(lines, "\n"))
	m, found := replyTo(t, lines, `"s"`)
	require.True(t, found)
	assert.Contains(t, string(m["result"]), "slow")
}

// blocking is a Caller that runs until its call is cancelled, as the agent channel does.
type blocking struct{ started chan struct{} }

func (b blocking) CallTool(ctx context.Context, _ Call) (json.RawMessage, error) {
	close(b.started)
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestCancelledCallIsNotASandboxError: a call the client cancelled is neither answered
// ("sandbox error: context canceled") nor logged as a failed call.
func TestCancelledCallIsNotASandboxError(t *testing.T) {
	var logs testbin.SyncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv := newServer(t, blocking{make(chan struct{})}, Options{Logger: logger})
	lines := serveWith(t, srv, initLines+strings.Join([]string{
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ls","arguments":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
		`{"jsonrpc":"2.0","id":4,"method":"ping"}`,
	}, "\n")+"\n")
	_, answered := replyTo(t, lines, "3")
	assert.False(t, answered, "no answer to the cancelled call:\n%s", strings.Join(lines, "\n"))
	_, answered = replyTo(t, lines, "4")
	assert.True(t, answered)
	assert.NotContains(t, logs.String(), "tool call failed")
	assert.NotContains(t, logs.String(), "level=WARN")
}

func TestTrackerBoundsBytesInFlight(t *testing.T) {
	tr := newTracker(100 << 20)
	stop := make(chan struct{})
	defer close(stop)
	id := func(n int) jsonrpc.ID { i, _ := jsonrpc.MakeID(float64(n)); return i }
	tr.start(id(1), 60<<20, nil, stop)
	tr.start(id(2), 30<<20, nil, stop) // 90 MB held: fits
	tr.start(id(3), 1<<10, nil, stop)  // small calls never wait
	third := make(chan struct{})
	go func() { tr.start(id(4), 30<<20, nil, stop); close(third) }()
	select {
	case <-third:
		t.Fatal("a call beyond the budget was taken at once")
	case <-time.After(100 * time.Millisecond):
	}
	send, _, release := tr.finish(id(2))
	assert.True(t, send)
	release()
	select {
	case <-third:
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting call was not taken once budget was returned")
	}
	tr.cancel(id(1))
	send, _, _ = tr.finish(id(1))
	assert.False(t, send, "a cancelled call's answer is dropped")
	send, _, _ = tr.finish(id(99))
	assert.True(t, send, "answers to calls not tracked pass")
}

// TestServeQueuesBigCallsBeyondTheBudget: large writes beyond the in-flight budget wait
// (the client's pipe fills) instead of all being held at once; all complete.
func TestServeQueuesBigCallsBeyondTheBudget(t *testing.T) {
	dir := t.TempDir()
	content := strings.Repeat("0123456789abcdef", 1<<16) // 1 MB
	var in strings.Builder
	in.WriteString(initLines)
	for i := 0; i < 6; i++ {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"write","arguments":{"path":"f%d","content":%q}}}`+"\n", i, i, content)
	}
	srv := newServer(t, &Local{Registry: vmagent.Default(), Cwd: dir}, Options{})
	var out, logs testbin.SyncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	require.NoError(t, srv.Run(context.Background(), &serverTransport{framing: &Transport{In: strings.NewReader(in.String()), Out: &out, MaxLine: 2 << 20}, maxInflight: 2 << 20, logger: logger}))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	assert.Len(t, lines, 7)
	assert.Contains(t, logs.String(), "a large request waits", "the wait is logged")
	for i := 0; i < 6; i++ {
		got, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("f%d", i)))
		require.NoError(t, err)
		assert.Equal(t, content, string(got))
	}
}

// TestEncodeMessageMatchesSDK: the transport's encoder writes what the SDK's would.
func TestEncodeMessageMatchesSDK(t *testing.T) {
	id7, _ := jsonrpc.MakeID(float64(7))
	ids, _ := jsonrpc.MakeID("a\"\n\x01<>&\u2028é")
	msgs := []jsonrpc.Message{
		&jsonrpc.Request{ID: id7, Method: "tools/call", Params: json.RawMessage(`{"name":"read","arguments":{"path":"a"}}`)},
		&jsonrpc.Request{Method: "notifications/progress", Params: json.RawMessage(`{"progress":3}`)},
		&jsonrpc.Request{ID: ids, Method: "ping"},
		&jsonrpc.Response{ID: id7, Result: json.RawMessage(`{"content":[]}`)},
		&jsonrpc.Response{ID: ids, Error: &jsonrpc.Error{Code: -32602, Message: "bad \"x\"\n", Data: json.RawMessage(`{"k":1}`)}},
		&jsonrpc.Response{ID: id7, Error: fmt.Errorf("wrapped: %w", &jsonrpc.Error{Code: -32601, Message: "inner"})},
		&jsonrpc.Response{ID: id7, Error: errors.New("plain")},
	}
	for _, m := range msgs {
		want, err := jsonrpc.EncodeMessage(m)
		require.NoError(t, err)
		got, err := encodeMessage(nil, m)
		require.NoError(t, err)
		assert.True(t, bytes.HasSuffix(got, []byte("}\n")))
		assert.JSONEq(t, string(want), string(got))
		back, err := jsonrpc.DecodeMessage(bytes.TrimSpace(got))
		require.NoError(t, err)
		assert.IsType(t, m, back)
	}
}

// recording is a Caller that takes no stand-ins: it must get the arguments whole.
type recording struct{ got chan json.RawMessage }

func (r recording) CallTool(_ context.Context, c Call) (json.RawMessage, error) {
	r.got <- c.Args
	return json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`), nil
}

// TestServeLargeArguments: a write, an edit and a bash call whose strings are far over
// jsonwire.MinSize arrive exactly (the SDK saw stand-ins; the tools got the values), and
// a Caller that does not take stand-ins gets the arguments whole.
func TestServeLargeArguments(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("func f() {\n\treturn \"x\\y\" // é 😀\n}\n", 20000) // ~700 KB
	lit, _ := json.Marshal(big)
	script := strings.Repeat("abc \"q\" \\ é\n", 6000) // ~84 KB: argv takes at most 128 KB
	input := initLines + strings.Join([]string{
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write","arguments":{"path":"big.go","content":` + string(lit) + `}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write","arguments":{"path":"e.go","content":` + string(lit) + `}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"bash","arguments":{"command":` + string(mustJSON(t, "cat > b.txt <<'EOF'\n"+script+"EOF")) + `}}}`,
	}, "\n") + "\n"
	lines := serveScript(t, dir, input)
	assert.Len(t, lines, 4)
	for _, f := range []string{"big.go", "e.go"} {
		got, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.True(t, string(got) == big, "%s arrived exactly", f)
	}
	got, err := os.ReadFile(filepath.Join(dir, "b.txt"))
	require.NoError(t, err)
	assert.True(t, string(got) == script, "the bash command arrived exactly")

	newText := "// head\n" + big + "// tail\n"
	edit := `{"path":"e.go","edits":[{"oldText":` + string(lit) + `,"newText":` + string(mustJSON(t, newText)) + `}]}`
	lines = serveScript(t, dir, initLines+`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"edit","arguments":`+edit+`}}`+"\n")
	m, ok := replyTo(t, lines, "5")
	require.True(t, ok)
	assert.Contains(t, string(m["result"]), "Successfully replaced")
	got, err = os.ReadFile(filepath.Join(dir, "e.go"))
	require.NoError(t, err)
	assert.True(t, string(got) == newText, "the edit's large texts arrived exactly")

	// edits as one JSON-encoded string (pi's prepareArguments parses it): kept whole,
	// as edit's description says (tools.Tool.Parsed), so preparation finds the array.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s.go"), []byte(big), 0o644))
	encoded := mustJSON(t, string(mustJSON(t, []map[string]string{{"oldText": big, "newText": newText}})))
	lines = serveScript(t, dir, initLines+`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"edit","arguments":{"path":"s.go","edits":`+string(encoded)+`}}}`+"\n")
	m, ok = replyTo(t, lines, "7")
	require.True(t, ok)
	assert.Contains(t, string(m["result"]), "Successfully replaced")
	got, err = os.ReadFile(filepath.Join(dir, "s.go"))
	require.NoError(t, err)
	assert.True(t, string(got) == newText, "the edits given as a string arrived whole")

	rec := recording{make(chan json.RawMessage, 1)}
	serveWith(t, newServer(t, rec, Options{}), initLines+`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"write","arguments":{"path":"x","content":`+string(lit)+`}}}`+"\n")
	var args struct{ Content string }
	require.NoError(t, json.Unmarshal(<-rec.got, &args))
	assert.True(t, args.Content == big, "a caller that takes no stand-ins gets the value")
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// TestFastPathAnswersAsTheSDK: the transport answers tools/call of the server's routes
// itself (after initialize, or for calls of the stateless protocol); every answer is
// the one the SDK gives, byte for byte, for the golden session and its stateless form.
func TestFastPathAnswersAsTheSDK(t *testing.T) {
	session, err := os.ReadFile(filepath.Join("testdata", "session.jsonl"))
	require.NoError(t, err)
	meta := `"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"x","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},`
	var stateless []string
	for _, l := range strings.Split(strings.TrimSpace(string(session)), "\n") {
		if strings.Contains(l, `"method":"tools/call"`) {
			stateless = append(stateless, strings.Replace(l, `"params":{`, `"params":{`+meta, 1))
		}
	}
	for name, input := range map[string]string{"initialized": string(session), "stateless": strings.Join(stateless, "\n") + "\n"} {
		t.Run(name, func(t *testing.T) {
			run := func(fast bool) string {
				dir := t.TempDir()
				require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("alpha\nbeta\r\ngamma\n"), 0o644))
				require.NoError(t, os.Mkdir(filepath.Join(dir, "src"), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(dir, "src", "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644))
				srv := newServer(t, &Local{Registry: vmagent.Default(), Cwd: dir}, Options{Name: "golden", Version: "v0"})
				var out testbin.SyncBuffer
				tr := &serverTransport{framing: &Transport{In: strings.NewReader(input), Out: &out}}
				if fast {
					tr.srv = srv
				}
				require.NoError(t, srv.Run(context.Background(), tr))
				return inIDOrder(t, strings.ReplaceAll(out.String(), dir, "$WORK"))
			}
			assert.Equal(t, run(false), run(true))
		})
	}
}

// TestServeSetsAsideFromMinSize: every string of jsonwire.MinSize or more is set aside, not
// only those of requests large enough to count against the in-flight budget — a 100 KB
// write decoded whole three times over cost 8 ms a call.
func TestServeSetsAsideFromMinSize(t *testing.T) {
	for _, size := range []int{jsonwire.MinSize + 10, 100 << 10, bigLine + 10} {
		lit, _ := json.Marshal(strings.Repeat("x", size))
		rec := recording{make(chan json.RawMessage, 1)}
		routes := Routes(tools.Pi(), rec)
		for i := range routes {
			routes[i].StandIns = true // as the agent channel's routes
		}
		srv, err := NewServer(routes, Options{})
		require.NoError(t, err)
		serveAfterInit(t, srv, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"write","arguments":{"path":"x","content":`+string(lit)+`}}}`+"\n")
		got := <-rec.got
		assert.Less(t, len(got), 1024, "%d bytes: the caller sees a stand-in, not the value", size)
	}
}

// refusing is a Caller whose calls are refused as usage errors that crossed a process
// boundary already worded (the agent's invalid-params answer, relayed by the channel).
type refusing struct{}

func (refusing) CallTool(context.Context, Call) (json.RawMessage, error) {
	return nil, tools.UsageError("read: path must be good")
}

// TestCallersUsageErrorIsTheInvalidParamsAnswer: a usage error from the caller is the
// JSON-RPC invalid-params answer, worded exactly as the caller said.
func TestCallersUsageErrorIsTheInvalidParamsAnswer(t *testing.T) {
	lines := serveAfterInit(t, newServer(t, refusing{}, Options{}),
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"bad"}}}`+"\n")
	m, ok := replyTo(t, lines, "2")
	require.True(t, ok)
	assert.JSONEq(t, `{"code":-32602,"message":"read: path must be good"}`, string(m["error"]))
}

// TestValidatedInputAnswersAlike: a server whose input its writer validated (the agent)
// walks lines instead of checking them, and answers the golden session byte for byte as
// the checking server does; lines that are not messages still get the same errors.
func TestValidatedInputAnswersAlike(t *testing.T) {
	session, err := os.ReadFile(filepath.Join("testdata", "session.jsonl"))
	require.NoError(t, err)
	var odd []string
	for i, c := range []string{"this is not json", `[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, `{"jsonrpc":"2.0","id":2,"method":`, `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, `{"jsonrpc":"1.0","id":8005,"method":"ping"}`, `{"hello":"world"}`} {
		odd = append(odd, c, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 9000+i))
	}
	input := string(session) + strings.Join(odd, "\n") + "\n"
	run := func(validated bool) string {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("alpha\nbeta\r\ngamma\n"), 0o644))
		require.NoError(t, os.Mkdir(filepath.Join(dir, "src"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "src", "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644))
		srv := newServer(t, &Local{Registry: vmagent.Default(), Cwd: dir}, Options{Name: "golden", Version: "v0", ValidatedInput: validated})
		return inIDOrder(t, strings.ReplaceAll(strings.Join(serveWith(t, srv, input), "\n"), dir, "$WORK"))
	}
	checked, walked := run(false), run(true)
	assert.Equal(t, checked, walked)
	assert.Contains(t, walked, `"id":9005`, "served to the end")

	// What only a check finds (trailing data) shows the lines are walked, not checked.
	trailing := initLines + `{"jsonrpc":"2.0","id":7,"method":"ping"} x` + "\n"
	m, ok := replyTo(t, serveWith(t, newServer(t, &Local{Registry: vmagent.Default()}, Options{ValidatedInput: true}), trailing), "7")
	require.True(t, ok)
	assert.JSONEq(t, `{}`, string(m["result"]))
	lines := serveWith(t, newServer(t, &Local{Registry: vmagent.Default()}, Options{}), trailing)
	_, ok = replyTo(t, lines, "7")
	assert.False(t, ok, "checked: a parse error, with no id: %v", lines)
}

// TestLongStringsOutsideArgumentsAreNotSetAside: a large line's long strings are set
// aside in one pass over the whole line, but kept only when every one lies in the
// arguments of a call answered here. A long string elsewhere (a tool name, a progress
// token, a request id) comes back as sent, and the answers are the SDK's.
func TestLongStringsOutsideArgumentsAreNotSetAside(t *testing.T) {
	long := strings.Repeat("n", jsonwire.MinSize+5)
	content, _ := json.Marshal(strings.Repeat("c", jsonwire.MinSize+7))
	calls := []string{
		// An unknown tool whose name is long: the SDK's error names it.
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + long + `","arguments":{"path":"a","content":` + string(content) + `}}}`,
		// A long progress token beside long arguments: the write still lands.
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"progressToken":"` + long + `"},"name":"write","arguments":{"path":"b.txt","content":` + string(content) + `}}}`,
		// A long id: answered with that id.
		`{"jsonrpc":"2.0","id":"` + long + `","method":"tools/call","params":{"name":"write","arguments":{"path":"c.txt","content":` + string(content) + `}}}`,
	}
	for _, fast := range []bool{false, true} {
		dir := t.TempDir()
		srv := newServer(t, &Local{Registry: vmagent.Default(), Cwd: dir}, Options{})
		var out testbin.SyncBuffer
		in, w := io.Pipe()
		tr := &serverTransport{framing: &Transport{In: in, Out: &out}}
		if fast {
			tr.srv = srv
		}
		done := make(chan error, 1)
		go func() { done <- srv.Run(context.Background(), tr) }()
		_, err := io.WriteString(w, initLines)
		require.NoError(t, err)
		require.Eventually(t, func() bool { return strings.Contains(out.String(), `"id":"init"`) }, 10*time.Second, time.Millisecond)
		_, err = io.WriteString(w, strings.Join(calls, "\n")+"\n")
		require.NoError(t, err)
		w.Close()
		require.NoError(t, <-done)
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		assert.NotContains(t, out.String(), "pi-sbx-bigarg", "fast=%v: a stand-in leaked", fast)
		m, ok := replyTo(t, lines, "2")
		require.True(t, ok, "fast=%v", fast)
		assert.Contains(t, string(m["error"])+string(m["result"]), long, "fast=%v: the unknown tool is named", fast)
		m, ok = replyTo(t, lines, "3")
		require.True(t, ok, "fast=%v", fast)
		assert.Contains(t, string(m["result"]), "Successfully wrote")
		m, ok = replyTo(t, lines, `"`+long+`"`)
		require.True(t, ok, "fast=%v: the long id is answered", fast)
		assert.Contains(t, string(m["result"]), "Successfully wrote")
		for _, f := range []string{"b.txt", "c.txt"} {
			got, err := os.ReadFile(filepath.Join(dir, f))
			require.NoError(t, err)
			assert.Equal(t, jsonwire.MinSize+7, len(got), "fast=%v: %s", fast, f)
		}
	}
}

// TestServeTakesLineSizes: a pi-sbx/lineSize notification before a long line is taken
// by the transport alone: nothing answers it, it sizes the reader's next long line, and
// the write it announces lands whole.
func TestServeTakesLineSizes(t *testing.T) {
	dir := t.TempDir()
	content := strings.Repeat("line of text \"quoted\"\n", (2<<20)/22)
	lit, _ := json.Marshal(content)
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write","arguments":{"path":"big.txt","content":` + string(lit) + `}}}` + "\n"
	hint := fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":{"bytes":%d}}`+"\n", LineSizeMethod, len(call))
	lines := serveAfterInit(t, newServer(t, &Local{Registry: vmagent.Default(), Cwd: dir}, Options{}), hint+call)
	require.Len(t, lines, 2, "the initialize answer and the write's: %v", lines)
	m, ok := replyTo(t, lines, "2")
	require.True(t, ok)
	assert.Contains(t, string(m["result"]), "Successfully wrote")
	got, err := os.ReadFile(filepath.Join(dir, "big.txt"))
	require.NoError(t, err)
	assert.True(t, string(got) == content)

	// The transport itself: the announcement sizes the reader's next long line, and the
	// SDK never sees it (it ignores what it does not know, so only this shows it).
	in, _ := io.Pipe() // never written: the read loop waits, touching nothing
	mc, err := (&serverTransport{framing: &Transport{In: in, Out: io.Discard}}).Connect(context.Background())
	require.NoError(t, err)
	defer mc.Close()
	c := mc.(*conn)
	handled := make(chan bool, 1)
	go func() { handled <- c.handle(bytes.TrimSpace([]byte(hint)), len(hint)) }()
	select {
	case it := <-c.incoming:
		t.Fatalf("the announcement reached the SDK: %v", it)
	case ok := <-handled:
		require.True(t, ok)
	case <-time.After(10 * time.Second):
		t.Fatal("handling the announcement did not end")
	}
	assert.Equal(t, len(call), c.f.reader.Announced())
}

// TestDuplicateIDIsAnsweredWithIt: a call whose id is that of a call still running is
// refused with an error carrying that id (not null), and the first call is unharmed.
func TestDuplicateIDIsAnsweredWithIt(t *testing.T) {
	for _, id := range []string{`7`, `"seven"`} {
		b := blocking{make(chan struct{})}
		srv := newServer(t, b, Options{})
		lines := serveFed(t, srv, func(feed io.Writer, out *testbin.SyncBuffer) {
			call := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"ls","arguments":{}}}` + "\n"
			_, err := io.WriteString(feed, initLines+call)
			require.NoError(t, err)
			<-b.started
			_, err = io.WriteString(feed, call)
			require.NoError(t, err)
			require.Eventually(t, func() bool { return strings.Contains(out.String(), "already in use") }, 10*time.Second, time.Millisecond)
			_, err = io.WriteString(feed, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+`}}`+"\n")
			require.NoError(t, err)
		})
		m, found := replyTo(t, lines, id)
		require.True(t, found, "%s: answered with its id:\n%s", id, strings.Join(lines, "\n"))
		assert.Contains(t, string(m["error"]), "already in use")
	}
}

// who records the client and call id of every call it gets.
type who struct{ got chan Call }

func (w who) CallTool(_ context.Context, c Call) (json.RawMessage, error) {
	w.got <- c
	return json.RawMessage(`{"content":[]}`), nil
}

// TestCallsNameTheirClientAndID: a call knows its client (initialize's clientInfo, or a
// stateless call's own _meta) and its id (the client's CallIDMeta, else the request id).
func TestCallsNameTheirClientAndID(t *testing.T) {
	stateless := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"go-client","version":"1"}`
	for _, tc := range []struct {
		name, line, client, id string
	}{
		{"request id", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ls","arguments":{}}}`, "x", "7"},
		{"string request id", `{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"ls","arguments":{}}}`, "x", "a-1"},
		{"the client's id", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"ls","arguments":{},"_meta":{"pi-sbx/callId":"toolu_9"}}}`, "x", "toolu_9"},
		{"stateless", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"ls","arguments":{},` + stateless + `,"pi-sbx/callId":"c1"}}}`, "go-client", "c1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := who{make(chan Call, 1)}
			serveAfterInit(t, newServer(t, w, Options{}), tc.line+"\n")
			c := <-w.got
			assert.Equal(t, tc.client, c.Client)
			assert.Equal(t, tc.id, c.ID)
		})
	}
}
