//go:build !amd64

package grepmatch

const pairBlock = 32

// havePairSearch is false where there is no SIMD pair loop: litFinder then searches
// for its rarest byte with bytes.IndexByte, which beats a scalar pair loop.
func havePairSearch() bool { return false }

func indexPairBlocks(a, b *byte, n int, c1, m1, c2, m2 byte) int {
	panic("fsops: indexPairBlocks without SIMD support")
}
