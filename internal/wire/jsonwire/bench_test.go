//go:build bench

package jsonwire

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkUnescape decodes a 4 MB source literal (b.SetBytes: the literal's length).
//
//	go test -tags bench ./internal/wire/jsonwire -run '^$' -bench Unescape
func BenchmarkUnescape(b *testing.B) {
	lit := sourceLiteral(b, 4<<20)
	b.SetBytes(int64(len(lit)))
	for i := 0; i < b.N; i++ {
		if _, err := Unescape(lit); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidMembers validates a tools/call line carrying a 4 MB write of Go source
// (an escape every ten bytes or so): the host's check of every line it reads.
//
//	go test -tags bench ./internal/wire/jsonwire -run '^$' -bench ValidMembers
func BenchmarkValidMembers(b *testing.B) {
	src, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "fmt", "print.go"))
	require.NoError(b, err)
	lit, err := json.Marshal(string(bytes.Repeat(src, (4<<20)/len(src)+1)[:4<<20]))
	require.NoError(b, err)
	line := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write","arguments":{"path":"a.go","content":` + string(lit) + `}}}`)
	b.SetBytes(int64(len(line)))
	for i := 0; i < b.N; i++ {
		if err := ValidMembers(line, ignore); err != nil {
			b.Fatal(err)
		}
	}
}
