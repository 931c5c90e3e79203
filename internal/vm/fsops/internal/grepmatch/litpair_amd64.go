package grepmatch

import "golang.org/x/sys/cpu"

// pairBlock is how many candidate positions indexPairBlocks tests per step.
const pairBlock = 32

// havePairSearch reports whether indexPair's SIMD loop can run on this CPU.
func havePairSearch() bool { return cpu.X86.HasAVX2 }

// indexPairBlocks tests the candidate positions [0, n&^31) 32 at a time, reading
// a[q] and b[q] for each: the first q where a[q]|m1 == c1 and b[q]|m2 == c2, or -1.
// It is in litpair_amd64.s (AVX2).
//
//go:noescape
func indexPairBlocks(a, b *byte, n int, c1, m1, c2, m2 byte) int
