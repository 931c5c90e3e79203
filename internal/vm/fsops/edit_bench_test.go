//go:build bench

package fsops_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops"
)

// BenchmarkEdit1GB edits one line in the middle of a 1 GiB file and reports the growth
// of peak RSS during the edit against the reference that matters, the file's size
// (x-size: 1.0 means the edit held as much memory as the file is big):
//
//	go test -tags bench ./internal/vm/fsops -run '^$' -bench Edit1GB -benchtime 1x
//
// "lf" is a plain source-like file; "crlf" has Windows line endings; "trailing-space"
// has lines with trailing blanks, so pi's fuzzy normalization changes the text and the
// occurrence count cannot simply run on the file's bytes; "fuzzy" matches its oldText
// only after pi's normalization (trailing blanks).
func BenchmarkEdit1GB(b *testing.B) {
	const size = 1 << 30
	for _, kind := range []struct {
		name, eol, pad string
		fuzzy          bool // oldText matches only after pi's fuzzy normalization
	}{
		{"lf", "\n", "", false},
		{"crlf", "\r\n", "", false},
		{"trailing-space", "\n", "  ", false},
		{"fuzzy", "\n", "", true},
	} {
		b.Run(kind.name, func(b *testing.B) {
			dir := b.TempDir()
			path := filepath.Join(dir, "big.txt")
			lines := writeLines(b, path, size, kind.eol, kind.pad)
			mid := lines / 2
			for i := range b.N {
				old, new := lineText(mid, kind.pad), "edited "+strconv.Itoa(i)
				if i > 0 {
					old = "edited " + strconv.Itoa(i-1)
				}
				if kind.fuzzy {
					old += " \t" // trailing blanks: only the normalized oldText is found
				}
				resetPeakRSS(b)
				base := procStatusKB(b, "VmRSS")
				_, err := fsops.Edit(context.Background(), dir, fsops.EditArgs{Path: "big.txt", Edits: []fsops.Replacement{{OldText: old, NewText: new}}}, nil)
				if err != nil {
					b.Fatal(err)
				}
				growth := procStatusKB(b, "VmHWM") - base
				b.ReportMetric(float64(growth)/1024, "peak-MB")
				b.ReportMetric(float64(growth)*1024/size, "x-size")
			}
		})
	}
}

// lineText is line n of the generated file, without its ending.
func lineText(n int, pad string) string {
	return "line " + strconv.Itoa(n) + " of a generated file, some words to make it look like text" + pad
}

// writeLines streams numbered lines into path until about size bytes, without holding
// them, and returns how many it wrote.
func writeLines(b *testing.B, path string, size int, eol, pad string) int {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n, written := 0, 0
	for written < size {
		l := lineText(n, pad) + eol
		w.WriteString(l)
		written += len(l)
		n++
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return n
}

func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Fatalf("resetting peak RSS: %v", err)
	}
}

// procStatusKB reads a "Key:  N kB" line of /proc/self/status.
func procStatusKB(b *testing.B, key string) int {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatalf("%s not in /proc/self/status", key)
	return 0
}
