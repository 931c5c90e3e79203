package grepmatch

// A pair search looks for two bytes of a literal at once, at their distance apart:
// s[q+i1] and s[q+i2] both right. Candidates for a literal whose single rarest byte
// is common (the "E" of "Error(" turns up every ~150 bytes of Go source) drop by a
// factor of 30 or more, and a SIMD loop tests 32 positions per step where a
// bytes.IndexByte loop stops at every hit of its one byte. Only built where such a
// loop exists (see havePairSearch); elsewhere litFinder keeps its memchr loop.

// pairByte is one byte of a pair search: a byte b of the data matches when b|mask ==
// want. mask is 0x20 for an ASCII letter matched in either case (b|0x20 equals a
// lowercase letter only for that letter's two cases), else 0.
type pairByte struct {
	at         int // offset in the literal
	want, mask byte
}

func newPairByte(lit []byte, at int, fold bool) pairByte {
	c := lit[at]
	if fold && isASCIILetter(c) {
		return pairByte{at: at, want: c | 0x20, mask: 0x20}
	}
	return pairByte{at: at, want: c}
}

// indexPair returns the first q with q+n <= len(s) at which both bytes of the pair
// match (a candidate for the n-byte literal starting at q), or -1. The caller checks
// havePairSearch first.
func indexPair(s []byte, n int, a, b pairByte) int {
	end := len(s) - n + 1 // candidate starts are [0, end)
	q := 0
	for end-q >= pairBlock {
		// Every load of the block loop stays within s: it reads s[q+a.at : q+a.at+k]
		// and the same from b.at, for k < end-q, and b.at < n.
		j := indexPairBlocks(&s[q+a.at], &s[q+b.at], end-q, a.want, a.mask, b.want, b.mask)
		if j >= 0 {
			return q + j
		}
		q += (end - q) &^ (pairBlock - 1)
	}
	for ; q < end; q++ {
		if s[q+a.at]|a.mask == a.want && s[q+b.at]|b.mask == b.want {
			return q
		}
	}
	return -1
}
