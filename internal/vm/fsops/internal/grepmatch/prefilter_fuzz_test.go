package grepmatch

import (
	"bytes"
	"context"
	"testing"
	"unicode/utf8"
)

// FuzzGrepPrefilter checks that the literal and byte-set prefilters never change what
// matches: fileSearch must report exactly the lines the compiled regexp matches one by
// one. Its seed corpus runs with the ordinary tests.
func FuzzGrepPrefilter(f *testing.F) {
	seeds := []struct {
		pattern, text string
		fold          bool
	}{
		{"needle", "a needle\nno\nNEEDLE\n", false},
		{"needle", "a needle\nno\nNEEDLE\n", true},
		{"kelvin", "\u212aelvin\nkelvin\n", true},
		{"(foo|bar)[0-9]", "foo1\nbar\nxbar9\n", false},
		{`[A-Z][a-z]+\d{2}`, "Abc12\nabc12\n", false},
		{"^$", "\n\nx\n", false},
		{"a|", "x\ny", false},
		{`\w+é`, "café\n", true},
		{"aa.*aa", "aaa\naaaa\n", false},
		{"func.*zzq", "FUNC zzq\nzzq func\n", true},
		{`\w+_\d{3}\b`, "a_1234\nx_ab y_123\n", false},
		{`\w+_\d{3}`, "a_\u0661\u0662\u0663 x\nb_12\n", false}, // Unicode digits after the literal
		{`[a-z]+_k\w`, "ab_\u212ax\nab_Kx\nab_kx\n", true},     // a folded letter after it
		{`x_.y`, "x_\xffy\nx_y\n", false},                      // an invalid byte after it
		{`x_[^a]`, "x_\u00e9\nx_a\nx_\n", false},
		{`\s+$`, "a \nb\n \n\t\r\n\n\u00a0\n", false},     // a match ends the line
		{`[0-9a-f]{4}x`, "12ab\n0123x\nab12cdx\n", false}, // a run of class bytes
		{`\w{2,}\d+z`, "ab1z\n\u00e9\u00e92z\na1z\n", false},
		{"^$", "\n\nx\n\n", false},
		{`(?m)[\x{e9}x]$`, "caf\u00e9\nx\nxy\n\xff\n", true},
	}
	for _, s := range seeds {
		f.Add(s.pattern, s.text, s.fold)
	}
	f.Fuzz(func(t *testing.T, pattern, text string, fold bool) {
		if !utf8.ValidString(pattern) {
			// A pattern reaches grep through JSON, always valid UTF-8; and Go's regexp,
			// the reference here, lets U+FFFD match an invalid byte, ripgrep does not.
			return
		}
		p, err := Compile(pattern, false, fold)
		if err != nil {
			return
		}
		data := []byte(text)
		var want []int
		lines := bytes.Split(data, []byte("\n"))
		if len(data) > 0 && data[len(data)-1] == '\n' {
			lines = lines[:len(lines)-1]
		}
		if len(data) == 0 {
			lines = nil
		}
		for i, l := range lines {
			if p.re.Match(l) {
				want = append(want, i+1)
			}
		}
		var got []int
		for _, l := range fileSearch(context.Background(), p, data, 0, 1<<30) {
			got = append(got, l.Number)
		}
		if len(got) != len(want) {
			t.Fatalf("pattern %q fold %v on %q: lines %v, want %v", pattern, fold, text, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("pattern %q fold %v on %q: lines %v, want %v", pattern, fold, text, got, want)
			}
		}
	})
}
