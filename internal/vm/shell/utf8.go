package shell

import "unicode/utf8"

// replacement is U+FFFD encoded as UTF-8.
const replacement = "\uFFFD"

// utf8Decoder decodes a byte stream as the WHATWG Encoding Standard's UTF-8 decoder does
// (JavaScript's TextDecoder with {stream: true}, which pi uses): every maximal invalid
// subpart becomes one U+FFFD, and an incomplete sequence at the end of a chunk waits for
// the next chunk. Matching it exactly keeps byte and line counts identical to pi's for
// output that is not valid UTF-8.
type utf8Decoder struct {
	pending      [4]byte // bytes of the sequence in progress
	seen, needed int
	lower, upper byte // allowed range of the next continuation byte
	scratch      []byte
}

// decode returns the text of p. The result may alias p (valid input is not copied) or
// the decoder's scratch buffer; it is only valid until the next call.
func (d *utf8Decoder) decode(p []byte) []byte {
	dst := d.scratch[:0]
	i := 0
	for ; i < len(p) && d.needed != 0; i++ { // finish a sequence split across chunks
		dst = d.step(dst, p[i:i+1])
	}
	rest := p[i:]
	if cut := incompleteTail(rest); utf8.Valid(rest[:cut]) {
		if i == 0 && cut == len(rest) {
			return p // the common case: valid text, no copy
		}
		dst = append(dst, rest[:cut]...)
		rest = rest[cut:]
	}
	dst = d.step(dst, rest)
	d.scratch = dst
	return dst
}

// flush ends the stream: an unfinished sequence becomes one U+FFFD.
func (d *utf8Decoder) flush() []byte {
	if d.needed == 0 {
		return nil
	}
	d.reset()
	return []byte(replacement)
}

func (d *utf8Decoder) reset() {
	d.seen, d.needed, d.lower, d.upper = 0, 0, 0x80, 0xBF
}

// step runs the standard's decoder algorithm byte by byte, appending to dst.
func (d *utf8Decoder) step(dst, p []byte) []byte {
	for i := 0; i < len(p); {
		b := p[i]
		if d.needed == 0 {
			i++
			switch {
			case b < 0x80:
				dst = append(dst, b)
				continue
			case b >= 0xC2 && b <= 0xDF:
				d.needed, d.lower, d.upper = 1, 0x80, 0xBF
			case b >= 0xE0 && b <= 0xEF:
				d.needed, d.lower, d.upper = 2, 0x80, 0xBF
				if b == 0xE0 {
					d.lower = 0xA0
				} else if b == 0xED {
					d.upper = 0x9F
				}
			case b >= 0xF0 && b <= 0xF4:
				d.needed, d.lower, d.upper = 3, 0x80, 0xBF
				if b == 0xF0 {
					d.lower = 0x90
				} else if b == 0xF4 {
					d.upper = 0x8F
				}
			default:
				dst = append(dst, replacement...)
				continue
			}
			d.pending[0], d.seen = b, 0
			continue
		}
		if b < d.lower || b > d.upper {
			// The sequence so far is a maximal invalid subpart; b is looked at again.
			d.reset()
			dst = append(dst, replacement...)
			continue
		}
		i++
		d.lower, d.upper = 0x80, 0xBF
		d.seen++
		d.pending[d.seen] = b
		if d.seen == d.needed {
			dst = append(dst, d.pending[:d.seen+1]...)
			d.seen, d.needed = 0, 0
		}
	}
	return dst
}

// incompleteTail returns the length of p without a trailing lead byte (and its
// continuation bytes) whose sequence runs past the end of p.
func incompleteTail(p []byte) int {
	for back := 1; back <= 3 && back <= len(p); back++ {
		b := p[len(p)-back]
		if b < 0x80 {
			return len(p)
		}
		if b >= 0xC0 { // a lead byte: does its sequence fit?
			want := 2
			if b >= 0xF0 {
				want = 4
			} else if b >= 0xE0 {
				want = 3
			}
			if want > back {
				return len(p) - back
			}
			return len(p)
		}
	}
	return len(p)
}
