package fsops

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestHeadReaderChunksAsOneRead checks that reading on after an image sniff gives the
// line selector the chunks one read from offset 0 would: its decoding of a character
// split across chunks depends on where they end.
func TestHeadReaderChunksAsOneRead(t *testing.T) {
	data := []byte(strings.Repeat("héllo wörld\n", 1000))
	tests := []struct {
		name      string
		head, buf int
	}{
		{"head shorter than buffer", 4100, 64 << 10},
		{"head fills buffer", 4100, 4100},
		{"head longer than buffer", 4100, 1000},
		{"whole file in head", len(data), 64 << 10},
		{"empty head", 0, 512},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &headReader{head: data[:tt.head], r: bytes.NewReader(data[tt.head:])}
			want := bytes.NewReader(data)
			for {
				p, q := make([]byte, tt.buf), make([]byte, tt.buf)
				n, err := h.Read(p)
				m, _ := io.ReadFull(want, q)
				if n != m || !bytes.Equal(p[:n], q[:m]) {
					t.Fatalf("read %d bytes, one read from the start gives %d", n, m)
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
