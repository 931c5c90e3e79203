package fsops

import (
	"bytes"
	"math/rand"
	"regexp"
	"testing"

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
