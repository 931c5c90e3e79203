package collation

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/text/unicode/norm"
)

// TestCompare: the classes where Unicode 6.2's tables and ICU 78's differ, or where
// ICU does more than look code points up; expectations are localeCompare's under Node
// 22.23.5 (TestOrderIsNodes asks Node itself).
func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"a", "A", -1},                 // lowercase first at the third level
		{"a", "ä", -1}, {"ä", "b", -1}, // accents at the second
		{"😀", "🫨", 1}, {"🫨", "a", -1}, // an emoji of Unicode 15 among the others
		{"1", "a", -1}, {"10", "9", -1}, // digits before letters, one by one
		{"١", "2", -1}, {"½", "1", 1}, // Arabic-Indic one is one; ½ is 1/2
		{"_", "-", -1}, {"-", ".", -1}, // punctuation in ICU's order
		{"e\u0301", "é", 0}, {"é", "f", -1}, // canonical equivalence
		{"เก", "กเ", 0}, {"เก", "ก", 1}, // Thai prevowel: a contraction
		{"й", "и\u0306", 0}, {"й", "к", -1}, // й a letter of its own, decomposed or not
		{"ß", "ss", 1}, {"ß", "st", -1}, // ß is ss, with a secondary of its own
		{"æ", "ae", 1}, {"æ", "af", -1}, // æ is ae, likewise
		{"ς", "σ", 1},                         // final sigma after sigma
		{"\U00010D70", "\U00010D71", -1},      // Garay (Unicode 16) letters in order
		{"\U00010D70", "a", 1},                // and after Latin
		{"\U00016EBB", "一", -1},               // Beria Erfe (Unicode 17) before Han
		{"一", "\U00020000", -1},               // Han by block, then code point
		{"a\u0316\u0301", "a\u0301\u0316", 0}, // marks in canonical order
		{"x\u1ad5\u05b6", "x\u05b6\u1ad5", 0}, // with a mark Unicode 17 added
		{"\u05b6", "", 1},                     // a mark alone is not ignorable
		{"l·", "ŀ", 0},                        // a contraction across ASCII
		{"가", "\u1100\u1161", 0},              // Hangul syllable and its jamo
		{"カー", "カア", -1},                      // the length mark is a letter of its own
	} {
		assert.Equal(t, tc.want, Compare(tc.a, tc.b), "%+q %+q", tc.a, tc.b)
		assert.Equal(t, -tc.want, Compare(tc.b, tc.a), "%+q %+q", tc.b, tc.a)
	}
}

// TestKeysAreReusable: Key appends to dst and keeps nothing of an earlier call's string.
func TestKeysAreReusable(t *testing.T) {
	var buf Buffer
	k1 := Key(&buf, []byte("x"), "résumé")
	_ = Key(&buf, nil, "เกม\u0301")
	k2 := Key(&buf, nil, "résumé")
	assert.Equal(t, byte('x'), k1[0])
	assert.Equal(t, k1[1:], k2)
}

func TestUnpackRefusesDamagedTables(t *testing.T) {
	_, err := unpack(cesBin[:len(cesBin)/2])
	assert.Error(t, err)
	_, err = unpack([]byte("not deflated"))
	assert.Error(t, err)
}

// TestEveryCodePointNFDLeavesHasItsCEs: a run other than a linear one gives CEs to its
// first code point only (ces.bin's format), so every other code point it spans must be
// one that Go's NFD decomposes before lookup — else that code point would collate as
// completely ignorable.
func TestEveryCodePointNFDLeavesHasItsCEs(t *testing.T) {
	tb := loaded()
	for _, rn := range tb.runs {
		if rn.linear {
			continue
		}
		for c := rn.lo + 1; c < rn.lo+rune(rn.n); c++ {
			if s := string(c); norm.NFD.String(s) == s {
				t.Errorf("U+%04X is left alone by NFD but has no CEs of its own", c)
			}
		}
	}
	assert.Equal(t, rune(0x110000), tb.runs[len(tb.runs)-1].lo+rune(tb.runs[len(tb.runs)-1].n), "the runs reach U+10FFFF")
}
