package jsonwire

import (
	"encoding/binary"
	"math/bits"
)

// ClassifyBlocks is how many 64-byte blocks one Classify call takes at most.
const ClassifyBlocks = 16

// Classes are the bytes of up to ClassifyBlocks 64-byte blocks that validating or
// decoding a JSON string looks at: bit j of Quote[k] is set when byte j of block k is
// '"', and so on. (classify_amd64.s knows this layout.)
type Classes struct {
	Quote     [ClassifyBlocks]uint64
	Backslash [ClassifyBlocks]uint64
	Control   [ClassifyBlocks]uint64 // below 0x20
	Escape    [ClassifyBlocks]uint64 // a byte that may follow a backslash: "\/bfnrtu
	U         [ClassifyBlocks]uint64 // 'u'
}

// ClassifyFast reports whether Classify runs vectorised on this CPU (AVX2). Elsewhere it
// runs in plain Go, with the same classes but no faster than a byte loop: a caller that
// only wants speed uses its byte loop there.
func ClassifyFast() bool { return haveClassify() }

// Classify fills c for the 64-byte blocks of b (len(b) a multiple of 64, at most
// ClassifyBlocks blocks), 64 bytes at a time: with AVX2, in a few dozen instructions
// a block.
func Classify(b []byte, c *Classes) {
	n := len(b) / 64
	if n == 0 {
		return
	}
	if haveClassify() {
		classifyBlocks(&b[0], n, c)
		return
	}
	classifyGeneric(b[:64*n], c)
}

// classifyGeneric is Classify eight bytes at a time, in plain Go.
func classifyGeneric(b []byte, c *Classes) {
	const ones = 0x0101010101010101
	// gather moves the high bit of each byte of m to bits 0..7.
	gather := func(m uint64) uint64 { return ((m >> 7) * 0x0102040810204080) >> 56 }
	is := func(x uint64, c byte) uint64 { return exactZero(x ^ (ones * uint64(c))) }
	for k := 0; k < len(b)/64; k++ {
		var q, bs, ctl, esc, u uint64
		for j := 0; j < 8; j++ {
			x := binary.LittleEndian.Uint64(b[64*k+8*j:])
			qm, bm, um := is(x, '"'), is(x, '\\'), is(x, 'u')
			em := qm | bm | um | is(x, '/') | is(x, 'b') | is(x, 'f') | is(x, 'n') | is(x, 'r') | is(x, 't')
			q |= gather(qm) << (8 * j)
			bs |= gather(bm) << (8 * j)
			ctl |= gather(below20(x)) << (8 * j)
			esc |= gather(em) << (8 * j)
			u |= gather(um) << (8 * j)
		}
		c.Quote[k], c.Backslash[k], c.Control[k], c.Escape[k], c.U[k] = q, bs, ctl, esc, u
	}
}

// exactZero has the high bit set in each byte of v that is zero, and only those.
func exactZero(v uint64) uint64 {
	const lows, highs = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	return ^((v&lows + lows) | v) & highs
}

// below20 has the high bit set in each byte of v below 0x20, and only those.
func below20(v uint64) uint64 {
	const highs = 0x8080808080808080
	// A byte is below 0x20 when its top three bits are clear.
	top := v & 0xe0e0e0e0e0e0e0e0
	return exactZero(top) & highs
}

// Escaped returns the bytes of a 64-byte block that a backslash escapes and that are
// not backslashes themselves (the byte after each run of backslashes of odd length),
// given the block's backslashes and carry: 1 if the block's first byte is escaped by the
// block before (it is then included, whatever it is), and on return whether the next
// block's first byte is. A run pairs up from its first backslash: in `\\\"` the quote is
// escaped, in `\\"` it is not.
func Escaped(backslash uint64, carry *uint64) uint64 {
	const even, odd = 0x5555555555555555, 0xaaaaaaaaaaaaaaaa
	in := *carry
	bs := backslash &^ in // an escaped backslash begins nothing
	starts := bs &^ (bs << 1)
	// Adding a run's first bit to it carries to the byte after its end, which the run
	// escapes when it is at an odd distance from the run's start.
	evenEnds := (bs + starts&even) &^ bs
	oddSum, out := bits.Add64(bs, starts&odd, 0)
	oddEnds := oddSum &^ bs
	*carry = out // a run from an odd place to the block's end escapes the next byte
	return in | evenEnds&odd | oddEnds&even
}
