//go:build bench

package fsops_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops"
)

// BenchmarkWriteSmall times write of a 2 KB file (an in-place rewrite, with write's
// parent check and inode lock) against the bare rewrite pi's fs.writeFile does (open
// with O_TRUNC, write, close), alternating, in the same directory; it reports the medians
// and their ratio.
//
//	go test -tags bench ./internal/vm/fsops -run '^$' -bench WriteSmall -benchtime 2000x
func BenchmarkWriteSmall(b *testing.B) {
	dir := b.TempDir()
	q := fsops.NewMutationQueue()
	content := strings.Repeat("line of text\n", 160)
	inPlace := filepath.Join(dir, "in-place.txt")
	var ours, theirs []time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := fsops.Write(context.Background(), dir, fsops.WriteArgs{Path: "ours.txt", Content: content}, q); err != nil {
			b.Fatal(err)
		}
		ours = append(ours, time.Since(start))
		start = time.Now()
		if err := os.WriteFile(inPlace, []byte(content), 0o666); err != nil {
			b.Fatal(err)
		}
		theirs = append(theirs, time.Since(start))
	}
	b.StopTimer()
	o, t := medianOf(ours), medianOf(theirs)
	b.ReportMetric(float64(o.Microseconds()), "write-us")
	b.ReportMetric(float64(t.Microseconds()), "writefile-us")
	b.ReportMetric(float64(o)/float64(t), "ratio")
}

func medianOf(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
