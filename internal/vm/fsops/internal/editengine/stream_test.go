package editengine

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Normalizing piece by piece gives the whole text's normalization: pieces end after a
// "\n", which NFKC never combines across, and the other steps work per line.
func TestEachFuzzyPieceIsWholeNormalization(t *testing.T) {
	texts := []string{
		"",
		"plain\ntext\n",
		"trailing   \nspaces\t\t\nand last   ",
		"\n\u0301combining after a line feed\ne\u0301\n\u0301\u0327",
		"ﬁ ligature\n\uFF21 fullwidth\n① circled\n",
		"\u201Cquotes\u201D\n\u2013dash\u00A0nbsp\u3000\n",
		"\n\n\n   \n\u00A0\n",
		"no newline at all, long enough to be cut into several pieces if there were any",
	}
	for _, text := range texts {
		want := normalizeForFuzzyMatch(text)
		for _, size := range []int{1, 2, 3, 7, 64, 1 << 20} {
			var b strings.Builder
			allSame := true
			eachFuzzyPiece(text, size, func(p string, same bool) {
				b.WriteString(p)
				allSame = allSame && same
			})
			assert.Equal(t, want, b.String(), "%q in pieces of %d", text, size)
			assert.Equal(t, want == text, allSame, "%q: same", text)
		}
	}
}

// FuzzStreamCounter: counting over any split of a text is strings.Count of the whole
// (and JavaScript's split count for an empty needle).
func FuzzStreamCounter(f *testing.F) {
	f.Add("aaaaaa", "aa", 1, 3)
	f.Add("abababab", "aba", 2, 5)
	f.Add("xxabcxxabc", "abc", 3, 4)
	f.Add("héllo wörld", "ö", 1, 1)
	f.Add("short", "longer than the text", 2, 2)
	f.Add("a\nb\nc", "", 1, 2)
	f.Fuzz(func(t *testing.T, text, needle string, a, b int) {
		// Cut text at two points derived from a and b.
		i, j := 0, 0
		if len(text) > 0 {
			i, j = abs(a)%(len(text)+1), abs(b)%(len(text)+1)
		}
		if i > j {
			i, j = j, i
		}
		// Pieces are cut after a "\n", so at character boundaries.
		for i > 0 && i < len(text) && !utf8.RuneStart(text[i]) {
			i--
		}
		for j > i && j < len(text) && !utf8.RuneStart(text[j]) {
			j--
		}
		c := streamCounter{needle: needle}
		for _, p := range []string{text[:i], text[i:j], text[j:]} {
			c.feed(p)
		}
		want := strings.Count(text, needle)
		if needle == "" {
			want = utf16Len(text) - 1
		}
		assert.Equal(t, want, c.count(), "%q in %q cut at %d,%d", needle, text, i, j)
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// The spliced text reads as the built one: length, pieces, slices, equality, line feeds.
func TestSpliced(t *testing.T) {
	base := "one\ntwo\nthree\nfour\n"
	tests := []struct {
		name string
		reps []replacement
	}{
		{"none", nil},
		{"middle", []replacement{{index: 4, length: 3, newText: "TWO\n2"}}},
		{"start and end", []replacement{{index: 0, length: 3, newText: ""}, {index: 14, length: 5, newText: "4"}}},
		{"identical overall", []replacement{{index: 0, length: 1, newText: ""}, {index: 1, length: 2, newText: "one"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := spliced{base: base, reps: tt.reps}
			want := applyReplacements(base, tt.reps, 0)
			assert.Equal(t, want, strings.Join(s.pieces(), ""))
			assert.Equal(t, len(want), s.len())
			assert.Equal(t, want == base, s.equalsBase())
			assert.Equal(t, strings.Count(want, "\n"), s.lineFeeds(strings.Count(base, "\n")))
			for from := 0; from <= len(want); from++ {
				for to := from; to <= len(want); to++ {
					assert.Equal(t, want[from:to], s.slice(from, to))
				}
			}
		})
	}
}

func TestNormalizeInPlace(t *testing.T) {
	b := []byte("a\r\r\nb\nc\rd\r\n\r")
	got, e := normalizeInPlace(b)
	assert.Equal(t, normalizeToLF(string("a\r\r\nb\nc\rd\r\n\r")), string(got))
	var kinds []byte
	for i := range e.n {
		kinds = append(kinds, e.kind(i))
	}
	assert.Equal(t, []byte{eolCR, eolCRLF, eolLF, eolCR, eolCRLF, eolCR}, kinds)
}

// FuzzWriteOriginal: writing back from the text normalized in place and its endings is
// pi's applyToOriginal on the original, byte for byte.
func FuzzWriteOriginal(f *testing.F) {
	for _, s := range [][3]string{
		{"a\r\nb\r\nc\r\n", "b", "B\nX"},
		{"a\rb\rc", "b", "B\nC"},
		{"x\r\n\r\ny\r\n", "\n\ny", "Y"},
		{"one\r\ntwo\nthree\r", "two\nthree", "2\n3\n"},
		{"\r\r\n\n\r", "\n\n", "z\n"},
		{"tail\r", "tail", "t\r"},
		{"a\r\nb", "a", "a\r"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, original, oldText, newText string) {
		normalized := normalizeToLF(original)
		edited, err := applyEdits(normalized, []Replacement{{OldText: oldText, NewText: newText}}, "f.txt")
		if err != nil || !strings.Contains(original, "\r") {
			return
		}
		want := strings.Join(applyToOriginal(original, edited.reps), "")
		inPlace, e := normalizeInPlace([]byte(original))
		if !assert.Equal(t, normalized, string(inPlace)) {
			return
		}
		var b strings.Builder
		require.NoError(t, writeOriginal(&b, "", string(inPlace), e, edited.reps, 0))
		assert.Equal(t, want, b.String())
	})
}
