//go:build bench

package collation

import "testing"

// BenchmarkUnpack is what the first Key of a process pays: ces.bin inflated and indexed.
//
//	go test -tags bench ./internal/vm/fsops/internal/collation -run '^$' -bench Unpack
func BenchmarkUnpack(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := unpack(cesBin); err != nil {
			b.Fatal(err)
		}
	}
}
