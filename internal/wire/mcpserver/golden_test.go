//go:build linux

package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/vmagent"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// inIDOrder sorts the server's lines by request id: calls run concurrently, so replies
// come in any order. Replies without an id (parse errors) go first.
func inIDOrder(t *testing.T, out string) string {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	id := func(line string) float64 {
		var m struct{ ID *float64 }
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		if m.ID == nil {
			return -1
		}
		return *m.ID
	}
	sort.SliceStable(lines, func(i, j int) bool { return id(lines[i]) < id(lines[j]) })
	return strings.Join(lines, "\n") + "\n"
}

// TestProtocolGolden plays a scripted session — the requests in testdata/session.jsonl —
// through Serve with the tools running locally, and compares every line the server
// writes with testdata/session.golden: the protocol as a client sees it (tools/list with
// pi's schemas, results with content, structuredContent and isError, JSON-RPC errors).
// Regenerate with `go test ./internal/wire/mcpserver -run TestProtocolGolden -update` and review the diff.
func TestProtocolGolden(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("alpha\nbeta\r\ngamma\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "src", "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644))

	in, err := os.ReadFile(filepath.Join("testdata", "session.jsonl"))
	require.NoError(t, err)
	srv := newServer(t, &Local{Registry: vmagent.Default(), Cwd: dir}, Options{Name: "golden", Version: "v0"})
	var out bytes.Buffer
	require.NoError(t, Serve(context.Background(), srv, bytes.NewReader(in), &out))
	got := inIDOrder(t, strings.ReplaceAll(out.String(), dir, "$WORK"))

	golden := filepath.Join("testdata", "session.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run with -update to create it")
	assert.Equal(t, strings.Split(string(want), "\n"), strings.Split(got, "\n"))
}
