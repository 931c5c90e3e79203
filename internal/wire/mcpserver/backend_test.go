//go:build linux

package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
	"github.com/pi-sbx/pi-sbx-backend/internal/vm/vmagent"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

func TestResultMapping(t *testing.T) {
	img := result.ImageBlock("iVBORw0KGgo=", "image/png")
	tests := []struct {
		name        string
		in          result.Result
		wantStruct  bool
		wantDetails string // JSON after the round trip; "" for none
	}{
		{"text and details", result.Text("hi", map[string]any{"truncation": map[string]any{"truncated": true}}), true, `{"truncation":{"truncated":true}}`},
		{"no details", result.Text("ok", nil), false, ""},
		{"thrown", result.Thrown(assert.AnError), true, `{}`},
		{"image", result.Result{Content: []result.Content{result.TextBlock("Read image file [image/png]"), img}}, false, ""},
		{"non-object details are not structured content", result.Text("x", []int{1}), false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ToMCP(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.wantStruct, m.StructuredContent != nil)
			// Through the wire, as a client sees it.
			wire, err := json.Marshal(m)
			require.NoError(t, err)
			var back mcp.CallToolResult
			require.NoError(t, json.Unmarshal(wire, &back))
			got, err := FromMCP(&back)
			require.NoError(t, err)
			assert.Equal(t, tc.in.Content, got.Content)
			assert.Equal(t, tc.in.IsError, got.IsError)
			if tc.wantDetails == "" {
				assert.Nil(t, got.Details)
			} else {
				raw, _ := json.Marshal(got.Details)
				assert.JSONEq(t, tc.wantDetails, string(raw))
			}
		})
	}
	_, err := ToMCP(result.Result{Content: []result.Content{{Type: "audio"}}})
	assert.Error(t, err)
	_, err = ToMCP(result.Result{Content: []result.Content{result.ImageBlock("!!notbase64", "image/png")}})
	assert.Error(t, err)
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		r    *mcp.CallToolResult
		ok   bool
	}{
		{"nil", nil, false},
		{"text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}}, true},
		{"image", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1}, MIMEType: "image/png"}}}, true},
		{"image with a bad mime type", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1}, MIMEType: "text/html"}}}, false},
		{"empty image", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png"}}}, false},
		{"audio", &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: []byte{1}, MIMEType: "audio/wav"}}}, false},
		{"resource link", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ResourceLink{URI: "file:///etc/passwd", Name: "x"}}}, false},
		{"array structured content", &mcp.CallToolResult{StructuredContent: []any{1}}, false},
		{"object structured content", &mcp.CallToolResult{StructuredContent: map[string]any{"a": 1}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.r)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, ErrInvalidResult)
			}
		})
	}
}

// connect serves caller over an in-memory transport and returns a connected client.
func connect(t *testing.T, caller Caller, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	srv := newServer(t, caller, Options{Name: "test"})
	ss, err := srv.Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client"}, opts).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close(); ss.Close(); cancel() })
	return cs
}

func TestServerLocal(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644))
	reg := vmagent.Default()
	cs := connect(t, &Local{Registry: reg, Cwd: dir}, nil)
	ctx := context.Background()

	list, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		want, err := tools.Lookup(tools.Pi(), tl.Name)
		require.NoError(t, err)
		assert.Equal(t, want.Description, tl.Description)
	}
	assert.ElementsMatch(t, []string{"bash", "read", "write", "edit", "grep", "find", "ls"}, names)

	calls := []struct {
		name string
		args string
	}{
		{"read", `{"path":"a.txt"}`},
		{"read", `{"path":"missing.txt"}`},
		{"bash", `{"command":"echo out; exit 3"}`},
		{"write", `{"path":"sub/b.txt","content":"new"}`},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: json.RawMessage(c.args)})
			require.NoError(t, err)
			got, err := FromMCP(res)
			require.NoError(t, err)
			want, err := reg.Call(ctx, dir, c.name, []byte(c.args), tools.Env{})
			require.NoError(t, err)
			assert.Equal(t, want.Content, got.Content)
			assert.Equal(t, want.IsError, got.IsError)
			wantJSON, _ := json.Marshal(want.Details)
			gotJSON, _ := json.Marshal(got.Details)
			if want.Details == nil {
				assert.Nil(t, got.Details)
			} else {
				assert.JSONEq(t, string(wantJSON), string(gotJSON))
			}
		})
	}

	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"path": []any{5}}})
	var rpcErr *jsonrpc.Error
	require.ErrorAs(t, err, &rpcErr)
	assert.Equal(t, int64(jsonrpc.CodeInvalidParams), rpcErr.Code)
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope", Arguments: map[string]any{}})
	assert.Error(t, err)
}

func TestServerStreamsBashProgress(t *testing.T) {
	var mu sync.Mutex
	var streamed strings.Builder
	var lastTotal float64
	cs := connect(t, &Local{Registry: vmagent.Default(), Cwd: t.TempDir()}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			streamed.WriteString(req.Params.Message)
			lastTotal = req.Params.Progress
		},
	})
	params := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "for i in 1 2 3; do echo line$i; sleep 0.2; done"}}
	params.SetProgressToken("tok")
	res, err := cs.CallTool(context.Background(), params)
	require.NoError(t, err)
	final := res.Content[0].(*mcp.TextContent).Text
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, "line1\nline2\nline3\n", final)
	assert.Equal(t, final, streamed.String(), "the streamed pieces add up to the output")
	assert.Equal(t, float64(len(final)), lastTotal)
}

func TestServerCancelKillsCommand(t *testing.T) {
	dir := t.TempDir()
	cs := connect(t, &Local{Registry: vmagent.Default(), Cwd: dir}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
			"command": "sleep 300 & echo $! > pid; wait"}})
		done <- err
	}()
	pidFile := filepath.Join(dir, "pid")
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	require.Eventually(t, func() bool { return syscall.Kill(pid, 0) != nil }, 10*time.Second, 20*time.Millisecond,
		"the cancelled command's process group is killed")
}

// failing is a Caller whose sandbox is gone.
type failing struct{ err error }

func (f failing) CallTool(context.Context, Call) (json.RawMessage, error) {
	return nil, f.err
}

func TestServerReportsSandboxFailureAsToolError(t *testing.T) {
	cs := connect(t, failing{io.ErrUnexpectedEOF}, nil)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ls", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, "sandbox error: unexpected EOF")
}

func TestServeSurvivesMalformedInput(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := newServer(t, &Local{Registry: vmagent.Default(), Cwd: t.TempDir()}, Options{})
	served := make(chan error, 1)
	go func() { served <- Serve(context.Background(), srv, inR, outW); outW.Close() }()
	replies := bufio.NewScanner(outR)
	replies.Buffer(nil, 1<<20)
	send := func(line string) { _, err := io.WriteString(inW, line+"\n"); require.NoError(t, err) }
	next := func() map[string]any {
		require.True(t, replies.Scan(), "a reply")
		var m map[string]any
		require.NoError(t, json.Unmarshal(replies.Bytes(), &m))
		return m
	}
	code := func(m map[string]any) float64 {
		e, ok := m["error"].(map[string]any)
		require.True(t, ok, "an error reply: %v", m)
		return e["code"].(float64)
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	assert.NotNil(t, next()["result"])
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	tests := []struct {
		line string
		code float64
	}{
		{"garbage", jsonrpc.CodeParseError},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":`, jsonrpc.CodeParseError},
		{`[{"jsonrpc":"2.0","id":3,"method":"tools/list"}]`, jsonrpc.CodeInvalidRequest},
		{`{"id":4}`, jsonrpc.CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":5,"method":"no/such/method"}`, jsonrpc.CodeMethodNotFound},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"read","arguments":{"path":["x"]}}}`, jsonrpc.CodeInvalidParams},
	}
	for _, tc := range tests {
		send(tc.line)
		assert.Equal(t, tc.code, code(next()), tc.line)
	}
	send(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	m := next()
	assert.Equal(t, float64(7), m["id"])
	assert.Len(t, m["result"].(map[string]any)["tools"], 7)
	inW.Close()
	<-served
}

func TestTransportSkipsOverlongLines(t *testing.T) {
	var replies testbin.SyncBuffer
	long := strings.Repeat("x", 5000)
	in := "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n" + long + "\n{\"jsonrpc\":\"2.0\",\"method\":\"b\"}\n"
	c, err := (&serverTransport{framing: &Transport{In: strings.NewReader(in), Out: &replies, MaxLine: 100}}).Connect(context.Background())
	require.NoError(t, err)
	var methods []string
	for {
		msg, err := c.Read(context.Background())
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		methods = append(methods, msg.(*jsonrpc.Request).Method)
	}
	assert.Equal(t, []string{"a", "b"}, methods)
	assert.Contains(t, replies.String(), `"code":-32600`)
	assert.Contains(t, replies.String(), "longer than 100 bytes")
}

// TestServeAnswersEveryRequestBeforeEOF: input that ends while calls still run (a script
// piping requests in) still gets every reply; a cancelled call releases the wait.
func TestServeAnswersEveryRequestBeforeEOF(t *testing.T) {
	dir := t.TempDir()
	srv := newServer(t, &Local{Registry: vmagent.Default(), Cwd: dir}, Options{})
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep 0.3; echo slow done"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep 60"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	require.NoError(t, Serve(context.Background(), srv, strings.NewReader(in), &out))
	ids := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		ids[string(m.ID)] = string(m.Result)
	}
	assert.Contains(t, ids, "1")
	assert.Contains(t, ids, "4")
	assert.Contains(t, ids[`"slow"`], "slow done")
}
