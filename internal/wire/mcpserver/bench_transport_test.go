//go:build bench && linux

package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/vmagent"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// pipeSession serves caller with Serve over OS-like pipes and connects a client over
// Transport: the same code path as serve and the agent, without processes.
func pipeSession(b *testing.B, caller Caller) *mcp.ClientSession {
	b.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := newServer(b, caller, Options{})
	go func() { _ = Serve(context.Background(), srv, inR, outW); outW.Close() }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(),
		&Transport{In: outR, Out: inW, Closer: inW, MaxLine: 64 << 20}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// BenchmarkServeWrite is one write call through Serve (client → transport → server →
// local write → back), by size: the protocol's cost per call and per byte.
//
//	go test -tags bench -run '^$' -bench BenchmarkServeWrite -benchmem ./internal/wire/mcpserver
func BenchmarkServeWrite(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"2KB", 2 << 10}, {"100KB", 100 << 10}, {"10MB", 10 << 20}} {
		b.Run(size.name, func(b *testing.B) {
			dir := b.TempDir()
			cs := pipeSession(b, &Local{Registry: vmagent.Default(), Cwd: dir})
			line := "\tif err != nil { return fmt.Errorf(\"x: %w\", err) }\n"
			content, _ := json.Marshal(strings.Repeat(line, size.n/len(line)+1)[:size.n])
			params := &mcp.CallToolParams{Name: "write", Arguments: json.RawMessage(`{"path":"out.txt","content":` + string(content) + `}`)}
			b.SetBytes(int64(size.n))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := cs.CallTool(context.Background(), params)
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// BenchmarkServeSmallCalls is a small read and an ls through Serve over pipes, against
// the same call made in-process: the protocol's fixed cost per call.
//
//	go test -tags bench -run '^$' -bench BenchmarkServeSmallCalls -benchmem ./internal/wire/mcpserver
func BenchmarkServeSmallCalls(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte(strings.Repeat("hello world line\n", 120)), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, args string }{{"read", `{"path":"a.txt"}`}, {"ls", `{}`}} {
		b.Run(c.name+"/inprocess", func(b *testing.B) {
			reg := vmagent.Default()
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := reg.Call(context.Background(), dir, c.name, []byte(c.args), tools.Env{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/serve", func(b *testing.B) {
			cs := pipeSession(b, &Local{Registry: vmagent.Default(), Cwd: dir})
			p := &mcp.CallToolParams{Name: c.name, Arguments: json.RawMessage(c.args)}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := cs.CallTool(context.Background(), p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
