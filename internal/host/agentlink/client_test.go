//go:build linux

package agentlink

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/vmagent"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/jsonwire"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// dialServe connects a Client to Serve of pi's tools in dir, over pipes.
func dialServe(t *testing.T, dir string, o ClientOptions) *Client {
	t.Helper()
	srv, err := mcpserver.NewServer((&mcpserver.Local{Registry: vmagent.Default(), Cwd: dir}).Routes(tools.Pi()), mcpserver.Options{Name: "agent", Version: "v0"})
	require.NoError(t, err)
	cin, sout := io.Pipe()
	sin, cout := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- mcpserver.Serve(context.Background(), srv, sin, sout)
		sout.Close()
	}()
	c, err := Dial(context.Background(), cin, cout, cout, o)
	require.NoError(t, err)
	t.Cleanup(func() {
		c.Close()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			t.Error("serve did not end after the client closed")
		}
	})
	return c
}

func callText(t *testing.T, c *Client, name, args string) string {
	t.Helper()
	raw, err := c.CallTool(context.Background(), name, json.RawMessage(args), nil, "")
	require.NoError(t, err)
	clean, _, err := mcpserver.CleanResult(nil, raw)
	require.NoError(t, err)
	var r struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	require.NoError(t, json.Unmarshal(clean, &r))
	require.NotEmpty(t, r.Content)
	return r.Content[0].Text
}

// TestClientThroughServe: the client's calls reach pi's tools and come back; a large
// string set aside in a store goes out as its literal; 200 concurrent calls are each
// answered with their own result.
func TestClientThroughServe(t *testing.T) {
	dir := t.TempDir()
	c := dialServe(t, dir, ClientOptions{Name: "test", Version: "1"})
	assert.Equal(t, "Successfully wrote to a.txt", callText(t, c, "write", `{"path":"a.txt","content":"hello"}`))
	assert.Equal(t, "hello", callText(t, c, "read", `{"path":"a.txt"}`))

	big := strings.Repeat("line \"q\" é\n", 20000)
	lit, _ := json.Marshal(big)
	store := jsonwire.NewStore()
	args, keys := store.Offload([]byte(`{"path":"big.txt","content":` + string(lit) + `}`))
	require.Len(t, keys, 1)
	require.Less(t, len(args), 512)
	_, err := c.CallTool(context.Background(), "write", args, store, "")
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(dir, "big.txt"))
	require.NoError(t, err)
	assert.True(t, string(got) == big, "the set-aside content arrived exactly")

	_, err = c.CallTool(context.Background(), "ls", json.RawMessage("{\n\"path\": \".\"}"), nil, "")
	assert.ErrorContains(t, err, "line break", "a line is one message")
	assert.Contains(t, callText(t, c, "ls", " {\"path\":\".\"}\n"), "a.txt", "surrounding space is trimmed")

	atOnce(t, 200, func(i int) error { return echoes(c, fmt.Sprintf("call-%d", i)) })
}

// atOnce runs f(0) … f(n-1) at once and fails the test for each error.
func atOnce(t *testing.T, n int, f func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- f(i)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
}

// echoes calls bash to echo word and checks the output.
func echoes(c *Client, word string) error {
	raw, err := c.CallTool(context.Background(), "bash", json.RawMessage(`{"command":"echo `+word+`"}`), nil, "")
	if err == nil && !strings.Contains(string(raw), word+`\n`) {
		err = fmt.Errorf("echo %s got %s", word, raw)
	}
	return err
}

// TestClientProgressBeforeResult: a call's progress notifications all arrive, in
// order, before its result, and add up to the total the result reports.
func TestClientProgressBeforeResult(t *testing.T) {
	var mu sync.Mutex
	var got []string
	var last float64
	c := dialServe(t, t.TempDir(), ClientOptions{OnProgress: func(tok, msg string, total float64) {
		mu.Lock()
		defer mu.Unlock()
		if tok == "tok-1" {
			got = append(got, msg)
			last = total
		}
	}})
	raw, err := c.CallTool(context.Background(), "bash", json.RawMessage(`{"command":"for i in 1 2 3 4; do echo out-$i; sleep 0.25; done"}`), nil, "tok-1")
	require.NoError(t, err)
	_, total, err := mcpserver.CleanResult(nil, raw)
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	assert.GreaterOrEqual(t, len(got), 2, "streamed in several notifications")
	assert.Equal(t, "out-1\nout-2\nout-3\nout-4\n", strings.Join(got, ""))
	assert.Equal(t, total, last, "every notification came before the result")
}

// TestClientCancel: cancelling a call returns at once, tells the server (whose command
// is killed), and leaves the connection usable.
func TestClientCancel(t *testing.T) {
	dir := t.TempDir()
	c := dialServe(t, dir, ClientOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "bash", json.RawMessage(`{"command":"echo $$ > pid; exec sleep 30"}`), nil, "")
		done <- err
	}()
	require.Eventually(t, func() bool { b, _ := os.ReadFile(filepath.Join(dir, "pid")); return len(b) > 0 }, 10*time.Second, 10*time.Millisecond)
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
	pid, _ := os.ReadFile(filepath.Join(dir, "pid"))
	require.Eventually(t, func() bool {
		_, err := os.Stat("/proc/" + strings.TrimSpace(string(pid)))
		return err != nil
	}, 10*time.Second, 20*time.Millisecond, "the server killed the cancelled command")
	assert.Equal(t, "ok\n", callText(t, c, "bash", `{"command":"echo ok"}`))
}

// closeOutput, as a line of a fakeServer's answer, ends its output instead.
const closeOutput = "<close>"

// fakeServer is a scripted peer: it answers initialize, then hands every request line
// to answer, whose lines it writes back.
func fakeServer(t *testing.T, answer func(req map[string]json.RawMessage) []string) (*Client, error) {
	t.Helper()
	cin, sout := io.Pipe()
	sin, cout := io.Pipe()
	go func() {
		defer sout.Close()
		sc := bufio.NewScanner(sin)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var req map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &req) != nil {
				return
			}
			var lines []string
			if string(req["method"]) == `"initialize"` {
				lines = []string{`{"jsonrpc":"2.0","id":` + string(req["id"]) + `,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"f","version":"0"}}}`}
			} else {
				lines = answer(req)
			}
			for _, l := range lines {
				if l == closeOutput {
					return
				}
				if _, err := io.WriteString(sout, l+"\n"); err != nil {
					return
				}
			}
		}
	}()
	return Dial(context.Background(), cin, cout, cout, ClientOptions{MaxLine: 4096})
}

// TestClientRefusesAPeerNotSpeakingMCP: garbage, an oversized line, an answer to no
// request and the end of output each end the connection; the call in flight fails with
// ErrClientClosed and says why, and later calls fail at once.
func TestClientRefusesAPeerNotSpeakingMCP(t *testing.T) {
	for _, tc := range []struct {
		name, reply, why string
	}{
		{"garbage", "this is not JSON", "undecodable message"},
		{"oversized", `{"jsonrpc":"2.0","method":"x","params":"` + strings.Repeat("x", 5000) + `"}`, "longer than 4096 bytes"},
		{"unknown id", `{"jsonrpc":"2.0","id":99,"result":{}}`, "id 99, which no request of this client has"},
		{"string id", `{"jsonrpc":"2.0","id":"2","result":{}}`, `id "2"`},
		{"end of output", closeOutput, "unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := fakeServer(t, func(req map[string]json.RawMessage) []string {
				if string(req["method"]) != `"tools/call"` {
					return nil
				}
				return []string{tc.reply}
			})
			require.NoError(t, err)
			defer c.Close()
			_, err = c.CallTool(context.Background(), "ls", nil, nil, "")
			require.ErrorIs(t, err, ErrClientClosed)
			assert.ErrorContains(t, err, tc.why)
			<-c.Done()
			_, err = c.CallTool(context.Background(), "ls", nil, nil, "")
			assert.ErrorIs(t, err, ErrClientClosed)
		})
	}
}

// TestClientAnswersServerRequests: ping gets an empty result, anything else "method not
// found"; a JSON-RPC error answer is returned as a *jsonrpc.Error.
func TestClientAnswersServerRequests(t *testing.T) {
	answers := make(chan string, 4)
	c, err := fakeServer(t, func(req map[string]json.RawMessage) []string {
		if string(req["method"]) == `"tools/call"` {
			return []string{
				`{"jsonrpc":"2.0","id":"s1","method":"ping"}`,
				`{"jsonrpc":"2.0","id":7,"method":"roots/list","params":{}}`,
				`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
				`{"jsonrpc":"2.0","id":` + string(req["id"]) + `,"error":{"code":-32602,"message":"bad args"}}`,
			}
		}
		answers <- string(req["id"]) + " " + string(req["result"]) + string(req["error"])
		return nil
	})
	require.NoError(t, err)
	defer c.Close()
	_, err = c.CallTool(context.Background(), "ls", nil, nil, "")
	var rpcErr *jsonrpc.Error
	require.True(t, errors.As(err, &rpcErr), "%v", err)
	assert.Equal(t, int64(jsonrpc.CodeInvalidParams), rpcErr.Code)
	assert.Equal(t, "bad args", rpcErr.Message)
	got := []string{<-answers, <-answers, <-answers}
	assert.Contains(t, got, ` `, "notifications/initialized")
	assert.Contains(t, got, `"s1" {}`)
	assert.Contains(t, got, `7 {"code":-32601,"message":"Method not found"}`)
}

// TestClientUnderLoadWithCancels: 400 concurrent calls, every third cancelled at a
// random moment (before it is sent, in flight, as its answer arrives): each call that
// was not cancelled gets its own result, each cancelled one returns its context's
// error, and nothing is left pending.
func TestClientUnderLoadWithCancels(t *testing.T) {
	c := dialServe(t, t.TempDir(), ClientOptions{})
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for i := 0; i < 400; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if i%3 == 0 {
				time.AfterFunc(time.Duration(i%7)*time.Millisecond, cancel)
			}
			raw, err := c.CallTool(ctx, "bash", json.RawMessage(fmt.Sprintf(`{"command":"sleep 0.0%d; echo call-%d"}`, i%5, i)), nil, "")
			switch {
			case i%3 == 0 && err != nil:
				if !errors.Is(err, context.Canceled) {
					errs <- fmt.Errorf("cancelled call %d: %v", i, err)
				}
			case err != nil:
				errs <- fmt.Errorf("call %d: %v", i, err)
			case !strings.Contains(string(raw), fmt.Sprintf(`call-%d\n`, i)):
				errs <- fmt.Errorf("call %d got %s", i, raw)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	c.mu.Lock()
	assert.Empty(t, c.pending, "no call left pending")
	c.mu.Unlock()
	assert.Equal(t, "still here\n", callText(t, c, "bash", `{"command":"echo still here"}`))
}

// TestClientEndsWhenItCannotWrite: a request that cannot be written (the server stopped
// reading) ends the connection, since part of it may be on the wire; a call whose
// context is already done is not sent at all.
func TestClientEndsWhenItCannotWrite(t *testing.T) {
	cin, sout := io.Pipe()
	sin, cout := io.Pipe()
	go func() {
		r := bufio.NewReader(sin)
		line, _ := r.ReadBytes('\n')
		var req map[string]json.RawMessage
		_ = json.Unmarshal(line, &req)
		io.WriteString(sout, `{"jsonrpc":"2.0","id":`+string(req["id"])+`,"result":{"protocolVersion":"2025-06-18","capabilities":{}}}`+"\n")
		r.ReadBytes('\n') // notifications/initialized
		sin.Close()       // stop reading
	}()
	c, err := Dial(context.Background(), cin, cout, cout, ClientOptions{})
	require.NoError(t, err)
	defer c.Close()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.CallTool(done, "ls", nil, nil, "")
	assert.ErrorIs(t, err, context.Canceled)
	require.Eventually(t, func() bool {
		_, err = c.CallTool(context.Background(), "ls", nil, nil, "")
		return err != nil
	}, 5*time.Second, 10*time.Millisecond)
	assert.ErrorContains(t, err, "writing the tools/call request")
	<-c.Done()
	_, err = c.CallTool(context.Background(), "ls", nil, nil, "")
	assert.ErrorIs(t, err, ErrClientClosed)
}

// TestClientLargeCallsAtOnce: large writes (each announced with its size) and small
// calls, all at once through one connection, each arrive exactly: an announcement
// always sizes its own line.
func TestClientLargeCallsAtOnce(t *testing.T) {
	dir := t.TempDir()
	c := dialServe(t, dir, ClientOptions{MaxLine: 64 << 20})
	atOnce(t, 48, func(i int) error {
		if i%4 != 0 {
			return echoes(c, fmt.Sprintf("small-%d", i))
		}
		content := strings.Repeat(fmt.Sprintf("file %d \"line\"\n", i), (mcpserver.LineSizeMin+i*7919)/16)
		lit, _ := json.Marshal(content)
		if _, err := c.CallTool(context.Background(), "write", json.RawMessage(fmt.Sprintf(`{"path":"f%d.txt","content":%s}`, i, lit)), nil, ""); err != nil {
			return err
		}
		got, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", i)))
		if err == nil && string(got) != content {
			err = fmt.Errorf("f%d.txt: %d bytes, want %d", i, len(got), len(content))
		}
		return err
	})
}
