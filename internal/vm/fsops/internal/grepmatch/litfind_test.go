package grepmatch

import (
	"bytes"
	"math/rand"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLitFinderAgainstReference compares the finder with bytes.Index and a folded
// regexp on random text over a small alphabet, where candidate bytes hit often.
func TestLitFinderAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	const alphabet = "abkKsS_\n xyzAB"
	randText := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.Intn(len(alphabet))]
		}
		return b
	}
	for i := 0; i < 2000; i++ {
		lit := randText(1 + rng.Intn(4))
		if bytes.IndexByte(lit, '\n') >= 0 {
			continue
		}
		data := randText(rng.Intn(300))
		if f := newLitFinder(lit, false); assert.NotNil(t, f) {
			assert.Equal(t, bytes.Index(data, lit), f.index(data), "%q in %q", lit, data)
		}
		f := newLitFinder(lit, true)
		want := regexp.MustCompile("(?i)" + regexp.QuoteMeta(string(lit))).FindIndex(data)
		got := -1
		if f != nil {
			got = f.index(data)
		}
		switch {
		case f == nil:
			// Only letters with non-ASCII case partners: no prefilter, nothing to check.
		case f.exact && want == nil:
			assert.Equal(t, -1, got, "%q in %q", lit, data)
		case f.exact:
			assert.Equal(t, want[0], got, "%q in %q", lit, data)
		case want != nil:
			// A candidate must be found at or before the match's line.
			require.GreaterOrEqual(t, got, 0, "%q in %q", lit, data)
			assert.LessOrEqual(t, bytes.Count(data[:got], []byte("\n")), bytes.Count(data[:want[0]], []byte("\n")))
		}
	}
}

func TestLitFinderPicksRareByte(t *testing.T) {
	f := newLitFinder([]byte("needle_in_haystack"), false)
	require.NotNil(t, f)
	assert.Equal(t, byte('k'), f.lo)
	f = newLitFinder([]byte("kelvin"), true) // k folds to the Kelvin sign: not searched for
	require.NotNil(t, f)
	assert.False(t, f.exact)
	assert.NotEqual(t, byte('k'), f.lo)
}

// TestIndexPairAgainstNaive checks the pair search (SIMD blocks and scalar tail) at
// every length and alignment around the block sizes, with and without case masks.
func TestIndexPairAgainstNaive(t *testing.T) {
	if !havePairSearch() {
		t.Skip("no SIMD pair search on this CPU")
	}
	rng := rand.New(rand.NewSource(11))
	const alphabet = "aAbB(E_r"
	buf := make([]byte, 400)
	for i := 0; i < 3000; i++ {
		for k := range buf {
			buf[k] = alphabet[rng.Intn(len(alphabet))]
		}
		start := rng.Intn(40)
		s := buf[start : start+rng.Intn(len(buf)-start)]
		n := 2 + rng.Intn(10)
		lit := make([]byte, n)
		for k := range lit {
			lit[k] = alphabet[rng.Intn(len(alphabet))]
		}
		i1 := rng.Intn(n - 1)
		i2 := i1 + 1 + rng.Intn(n-1-i1)
		fold := rng.Intn(2) == 0
		a, b := newPairByte(lit, i1, fold), newPairByte(lit, i2, fold)
		want := -1
		for q := 0; q+n <= len(s); q++ {
			eq := func(c, l byte) bool { return c == l || fold && isASCIILetter(c) && c|0x20 == l|0x20 }
			if eq(s[q+i1], lit[i1]) && eq(s[q+i2], lit[i2]) {
				want = q
				break
			}
		}
		require.Equal(t, want, indexPair(s, n, a, b), "%q at %d,%d (fold %v) in %q", lit, i1, i2, fold, s)
	}
}

// TestLitFinderLongText is TestLitFinderAgainstReference on texts long enough for the
// pair search's SIMD blocks, with longer literals.
func TestLitFinderLongText(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	alphabet := []rune("abcE(r_ \nxyXYkKsS\u212a") // with the Kelvin sign, which folds to k
	randText := func(n int) []byte {
		var b []byte
		for range n {
			b = utf8.AppendRune(b, alphabet[rng.Intn(len(alphabet))])
		}
		return b
	}
	for i := 0; i < 1000; i++ {
		lit := bytes.ReplaceAll(randText(2+rng.Intn(6)), []byte("\n"), []byte("("))
		data := randText(rng.Intn(2000))
		if rng.Intn(2) == 0 && len(data) > len(lit) {
			at := rng.Intn(len(data) - len(lit))
			copy(data[at:], lit)
		}
		if f := newLitFinder(lit, false); assert.NotNil(t, f) {
			assert.Equal(t, bytes.Index(data, lit), f.index(data), "%q", lit)
		}
		want := -1
		if m := regexp.MustCompile("(?i)" + regexp.QuoteMeta(string(lit))).FindIndex(data); m != nil {
			want = m[0]
		}
		f := newLitFinder(lit, true)
		switch {
		case f == nil:
		case f.exact:
			assert.Equal(t, want, f.index(data), "%q folded", lit)
		case want < 0:
			// Only a candidate, which need not be -1.
		default:
			got := f.index(data)
			require.GreaterOrEqual(t, got, 0, "%q folded", lit)
			assert.LessOrEqual(t, bytes.Count(data[:got], []byte("\n")), bytes.Count(data[:want], []byte("\n")), "%q folded", lit)
		}
	}
}

// TestLitFinderInexactPair checks the candidates of folded literals with k or s (which
// fold beyond ASCII): the pair from a run of plain letters finds the occurrence's line,
// wherever the run lies in the literal, and not the lines before, where the runs occur
// without the rest of the literal.
func TestLitFinderInexactPair(t *testing.T) {
	filler := strings.Repeat("HAYxTAC_kate_x xyzq ab__cd\n", 20)
	cases := []struct{ lit, occurrence string }{
		{"haystack", "HAY\u017fTAC\u212a"},
		{"skate_x", "\u017f\u212aATE_X"},
		{"kxyzq", "\u212aXYZQ"},
		{"ab_sk_cd", "aB_S\u212a_Cd"},
	}
	for _, c := range cases {
		f := newLitFinder([]byte(c.lit), true)
		require.NotNil(t, f, c.lit)
		require.False(t, f.exact, c.lit)
		for _, at := range []int{0, 3, 17} {
			data := []byte(filler[:at*27] + "-- " + c.occurrence + " --\n" + filler)
			got := f.index(data)
			require.GreaterOrEqual(t, got, 0, "%q at line %d", c.lit, at)
			assert.Equal(t, at, bytes.Count(data[:got], []byte("\n")), "%q at line %d", c.lit, at)
		}
		assert.Equal(t, -1, f.index([]byte(filler)), c.lit)
	}
}
