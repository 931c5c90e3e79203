package jsonwire

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClassify: the AVX2 and the plain Go classifiers give every byte's class, for
// every byte value at every place of a block.
func TestClassify(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	b := make([]byte, 64*ClassifyBlocks)
	for round := 0; round < 200; round++ {
		for i := range b {
			switch rnd.Intn(5) {
			case 0:
				b[i] = byte(rnd.Intn(256))
			case 4:
				b[i] = "/bfnrtuvx"[rnd.Intn(9)]
			case 1:
				b[i] = '"'
			case 2:
				b[i] = '\\'
			default:
				b[i] = byte(0x18 + rnd.Intn(16)) // around 0x20
			}
		}
		var want Classes
		for i, c := range b {
			bit := uint64(1) << (i % 64)
			set := func(m *[ClassifyBlocks]uint64, yes bool) {
				if yes {
					m[i/64] |= bit
				}
			}
			set(&want.Quote, c == '"')
			set(&want.Backslash, c == '\\')
			set(&want.Control, c < 0x20)
			set(&want.Escape, strings.IndexByte(`"\\/bfnrtu`, c) >= 0)
			set(&want.U, c == 'u')
		}
		var got Classes
		classifyGeneric(b, &got)
		require.Equal(t, want, got, "plain Go")
		if haveClassify() {
			got = Classes{}
			Classify(b, &got)
			require.Equal(t, want, got, "AVX2")
		}
	}
}

// TestEscaped: block by block, with the carry between blocks, Escaped finds the bytes a
// backslash escapes as a scan from the start does, for runs of every length anywhere,
// across block boundaries too.
func TestEscaped(t *testing.T) {
	rnd := rand.New(rand.NewSource(2))
	for round := 0; round < 2000; round++ {
		n := 64 * (1 + rnd.Intn(4))
		b := make([]byte, n)
		density := 1 + rnd.Intn(8)
		for i := range b {
			if rnd.Intn(density) == 0 {
				b[i] = '\\'
			} else {
				b[i] = 'x'
			}
		}
		// A scan from the start: a backslash not escaped escapes the next byte.
		want := make([]bool, n)
		for i := 0; i < n; i++ {
			if b[i] == '\\' {
				if i+1 < n {
					want[i+1] = true
				}
				i++
			}
		}
		var carry uint64
		for k := 0; k < n/64; k++ {
			var bs uint64
			for j := 0; j < 64; j++ {
				if b[64*k+j] == '\\' {
					bs |= 1 << j
				}
			}
			got := Escaped(bs, &carry)
			for j := 0; j < 64; j++ {
				i := 64*k + j
				// Escaped backslashes are left out, except the block's first byte.
				expect := want[i] && (b[i] != '\\' || j == 0)
				require.Equal(t, expect, got&(1<<j) != 0, "round %d, byte %d of %q", round, i, b)
			}
		}
	}
}
