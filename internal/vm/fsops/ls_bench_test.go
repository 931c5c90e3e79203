//go:build bench

package fsops

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"
)

// BenchmarkLsSort sorts the names of a 10,000-entry directory as ls does (ICU 78's
// order, fsops/internal/collation) and as it did before (golang.org/x/text/collate's
// Unicode 6.2 tables), each round both, and reports ours over the old one (x-collate):
//
//	go test -tags bench ./internal/vm/fsops -run '^$' -bench LsSort -benchtime 20x
func BenchmarkLsSort(b *testing.B) {
	names := benchNames(10000)
	var ours, old time.Duration
	for i := 0; i < b.N; i++ {
		a := append([]string(nil), names...)
		start := time.Now()
		sortLikeJS(a)
		ours += time.Since(start)
		a = append(a[:0], names...)
		start = time.Now()
		sortWithXTextCollate(a)
		old += time.Since(start)
	}
	b.ReportMetric(float64(ours.Nanoseconds())/float64(b.N), "ours-ns/op")
	b.ReportMetric(float64(old.Nanoseconds())/float64(b.N), "collate-ns/op")
	b.ReportMetric(float64(ours)/float64(old), "x-collate")
}

// benchNames is a project directory's kind of names: mostly ASCII (source files, tests,
// numbered logs, dotfiles), some with accents, CJK or emoji.
func benchNames(n int) []string {
	r := rand.New(rand.NewSource(1))
	stems := []string{"main", "README", "test", "Makefile", "config", "utils", "index", "résumé", "données", "日本語", "报告", "café", "Ölfarbe", "naïve", "📁notes", "🫨shake", "Straße", "ΟΔΟΣ", "данные"}
	exts := []string{".go", ".md", ".txt", ".json", "", ".tar.gz", "_test.go", ".log"}
	out := make([]string, 0, n)
	seen := map[string]bool{}
	for len(out) < n {
		s := stems[r.Intn(len(stems))]
		if r.Intn(3) == 0 {
			s = strings.ToUpper(s[:1]) + s[1:]
		}
		name := fmt.Sprintf("%s-%d%s", s, r.Intn(100000), exts[r.Intn(len(exts))])
		if r.Intn(10) == 0 {
			name = "." + name
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// sortWithXTextCollate is ls's sort as it was before fsops/internal/collation.
func sortWithXTextCollate(names []string) {
	c := collate.New(language.Und)
	var buf collate.Buffer
	keys := make(map[string][]byte, len(names))
	for _, n := range names {
		k := c.KeyFromString(&buf, jsLower(n))
		keys[n] = append([]byte(nil), k...)
	}
	sort.SliceStable(names, func(i, j int) bool {
		if c := strings.Compare(string(keys[names[i]]), string(keys[names[j]])); c != 0 {
			return c < 0
		}
		return names[i] < names[j]
	})
}
