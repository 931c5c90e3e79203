//go:build bench && linux

package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/vmagent"
)

// BenchmarkServerRead is one MCP hop (client → server → local read) in memory: the
// protocol's own cost, without processes or pipes.
//
//	go test -tags bench -run '^$' -bench BenchmarkServerRead ./internal/wire/mcpserver
func BenchmarkServerRead(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	srv := newServer(b, &Local{Registry: vmagent.Default(), Cwd: dir}, Options{})
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "read", Arguments: json.RawMessage(`{"path":"a.txt"}`)}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := cs.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
}
