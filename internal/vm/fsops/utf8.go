package fsops

import "unicode/utf8"

// replacementChar is U+FFFD in UTF-8.
const replacementChar = "\uFFFD"

// decodeLossy decodes b as Node's Buffer.toString("utf-8") and TextDecoder do (the WHATWG
// UTF-8 decoder): each maximal invalid subsequence becomes one U+FFFD. Go's own
// strings.ToValidUTF8 merges whole runs, and utf8.DecodeRune splits truncated sequences
// byte by byte; both would count bytes differently from pi.
func decodeLossy(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out, _ := appendLossy(make([]byte, 0, len(b)+8), b, true)
	return string(out)
}

// appendLossy appends the decoding of p to dst. When final is false, a trailing sequence
// that is incomplete but valid so far is not decoded but returned as carry, to be put in
// front of the next piece; when final is true it becomes one U+FFFD.
func appendLossy(dst, p []byte, final bool) (out, carry []byte) {
	i := 0
	for i < len(p) {
		b := p[i]
		if b < utf8.RuneSelf {
			start := i
			for i < len(p) && p[i] < utf8.RuneSelf {
				i++
			}
			dst = append(dst, p[start:i]...)
			continue
		}
		need, lo, hi := seqShape(b)
		if need == 0 {
			dst = append(dst, replacementChar...)
			i++
			continue
		}
		k := 1
		for ; k <= need; k++ {
			if i+k >= len(p) {
				break
			}
			c := p[i+k]
			l, h := byte(0x80), byte(0xBF)
			if k == 1 {
				l, h = lo, hi
			}
			if c < l || c > h {
				break
			}
		}
		switch {
		case k > need: // complete sequence
			dst = append(dst, p[i:i+need+1]...)
			i += need + 1
		case i+k >= len(p): // ran out of input inside a valid prefix
			if !final {
				return dst, p[i:]
			}
			dst = append(dst, replacementChar...)
			i = len(p)
		default: // invalid byte at i+k: the prefix is one error, the byte is read again
			dst = append(dst, replacementChar...)
			i += k
		}
	}
	return dst, nil
}

// seqShape returns how many continuation bytes lead byte b needs and the allowed range of
// the first one; need 0 means b cannot start a sequence.
func seqShape(b byte) (need int, lo, hi byte) {
	switch {
	case b >= 0xC2 && b <= 0xDF:
		return 1, 0x80, 0xBF
	case b == 0xE0:
		return 2, 0xA0, 0xBF
	case b == 0xED:
		return 2, 0x80, 0x9F
	case b >= 0xE1 && b <= 0xEF:
		return 2, 0x80, 0xBF
	case b == 0xF0:
		return 3, 0x90, 0xBF
	case b == 0xF4:
		return 3, 0x80, 0x8F
	case b >= 0xF1 && b <= 0xF3:
		return 3, 0x80, 0xBF
	}
	return 0, 0, 0
}
