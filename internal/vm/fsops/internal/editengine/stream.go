package editengine

import (
	"bytes"
	"strings"
	"unsafe"

	"golang.org/x/text/unicode/norm"
)

// An edit of a large file holds the file once: the bytes read are viewed as a string
// without a copy, the fuzzy-normalized text that pi builds for every occurrence count is
// produced and consumed piece by piece, and the edited text is never built — the diff
// takes its windows from the replacements, and the file is written as the pieces that
// make it up. Output is what the whole-string computation gives, byte for byte.

// fuzzyPiece is how much text is normalized at a time (then extended to a line end).
const fuzzyPiece = 1 << 20

// bytesString views b as a string without copying; b must never change afterwards.
func bytesString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// eachFuzzyPiece calls fn with normalizeForFuzzyMatch(text) in order, piece by piece
// (about size bytes each; a piece is valid only during its call);
// same tells that the piece came out unchanged. Pieces end just after a "\n", which
// normalizes to itself and never combines with its neighbours under NFKC, and the other
// steps work line by line, so the concatenation is the whole text's normalization.
func eachFuzzyPiece(text string, size int, fn func(piece string, same bool)) {
	var z fuzzyNormalizer
	for len(text) > 0 {
		end := len(text)
		if end > size {
			if i := strings.IndexByte(text[size:], '\n'); i >= 0 {
				end = size + i + 1
			}
		}
		chunk := text[:end]
		n := z.normalize(chunk)
		fn(n, len(n) == len(chunk) && unsafe.StringData(n) == unsafe.StringData(chunk))
		text = text[end:]
	}
}

// fuzzyNormalizer is normalizeForFuzzyMatch into buffers reused from piece to piece, so
// normalizing a large file leaves no garbage behind (with the file itself live, the
// collector would let about the file's size of it pile up). A result is valid until the
// next call.
type fuzzyNormalizer struct {
	nfkc, trimmed []byte
	replaced      bytes.Buffer
}

func (z *fuzzyNormalizer) normalize(s string) string {
	if norm.NFKC.QuickSpanString(s) != len(s) {
		z.nfkc = norm.NFKC.AppendString(z.nfkc[:0], s)
		s = bytesString(z.nfkc)
	}
	if t, changed := appendTrimLineEnds(z.trimmed[:0], s); changed {
		z.trimmed = t
		s = bytesString(z.trimmed)
	}
	if hasFuzzyChars(s) {
		z.replaced.Reset()
		_, _ = fuzzyReplacer.WriteString(&z.replaced, s) // a bytes.Buffer does not fail
		s = bytesString(z.replaced.Bytes())
	}
	return s
}

// appendTrimLineEnds appends s with trailing JavaScript whitespace cut from every line
// (trimLineEnds) to dst, and reports whether anything was cut; when nothing was, dst is
// returned as it came.
func appendTrimLineEnds(dst []byte, s string) ([]byte, bool) {
	copied, changed := 0, false // s[:copied] is already in dst
	for start := 0; start <= len(s); {
		end := strings.IndexByte(s[start:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += start
		}
		line := s[start:end]
		if trimmed := strings.TrimRightFunc(line, isJSSpace); len(trimmed) != len(line) {
			dst = append(dst, s[copied:start+len(trimmed)]...)
			copied, changed = end, true
		}
		start = end + 1
	}
	if !changed {
		return dst, false
	}
	return append(dst, s[copied:]...), true
}

// streamCounter counts non-overlapping occurrences of needle, leftmost first, in text
// that arrives in pieces — strings.Count of the concatenation (or, for an empty needle,
// JavaScript's split count: UTF-16 units + 1) — keeping only the bytes that may still
// begin a match.
type streamCounter struct {
	needle string
	carry  string // the stream's tail after the last match, shorter than needle
	n      int
	units  int // UTF-16 units seen, for an empty needle
}

func (c *streamCounter) feed(p string) {
	l := len(c.needle)
	if l == 0 {
		c.units += utf16Len(p)
		return
	}
	start, consumed := 0, false // where counting in p begins; the carry used up
	if c.carry != "" {
		// At most one match starts in the carry (it is shorter than the needle), and
		// l-1 bytes of p complete any that does.
		join := c.carry + p[:min(len(p), l-1)]
		if i := strings.Index(join, c.needle); i >= 0 && i < len(c.carry) {
			c.n++
			start, consumed = i+l-len(c.carry), true
		}
	}
	lastEnd := start
	for pos := start; ; {
		i := strings.Index(p[pos:], c.needle)
		if i < 0 {
			break
		}
		c.n++
		pos += i + l
		lastEnd, consumed = pos, true
	}
	switch {
	case consumed || len(p) >= l-1:
		c.carry = strings.Clone(p[max(lastEnd, len(p)-(l-1)):])
	default: // p is too short to hold a match: the old carry may still begin one
		joined := c.carry + p
		c.carry = joined[max(0, len(joined)-(l-1)):]
	}
}

func (c *streamCounter) count() int {
	if c.needle == "" {
		return c.units - 1
	}
	return c.n
}

// spliced is the text after sorted, disjoint replacements, never built whole.
type spliced struct {
	base string
	reps []replacement
}

// each calls fn with the pieces of the new text in order (empty ones left out).
func (s spliced) each(fn func(string)) {
	pos := 0
	for _, r := range s.reps {
		if r.index > pos {
			fn(s.base[pos:r.index])
		}
		if r.newText != "" {
			fn(r.newText)
		}
		pos = r.index + r.length
	}
	if pos < len(s.base) {
		fn(s.base[pos:])
	}
}

// pieces returns the pieces of the new text.
func (s spliced) pieces() []string {
	out := make([]string, 0, 2*len(s.reps)+1)
	s.each(func(p string) { out = append(out, p) })
	return out
}

// len is the new text's length.
func (s spliced) len() int {
	n := len(s.base)
	for _, r := range s.reps {
		n += len(r.newText) - r.length
	}
	return n
}

// equalsBase reports whether the new text is the base text, comparing piece by piece.
func (s spliced) equalsBase() bool {
	if s.len() != len(s.base) {
		return false
	}
	off, same := 0, true
	s.each(func(p string) {
		if same && s.base[off:off+len(p)] != p {
			same = false
		}
		off += len(p)
	})
	return same
}

// lineFeeds counts "\n" in the new text.
func (s spliced) lineFeeds(baseLineFeeds int) int {
	n := baseLineFeeds
	for _, r := range s.reps {
		n += countLineFeeds(r.newText) - countLineFeeds(s.base[r.index:r.index+r.length])
	}
	return n
}

// slice is the new text's bytes [from, to), built from the pieces it overlaps.
func (s spliced) slice(from, to int) string {
	var b strings.Builder
	b.Grow(to - from)
	off := 0
	s.each(func(p string) {
		lo, hi := max(from, off), min(to, off+len(p))
		if lo < hi {
			b.WriteString(p[lo-off : hi-off])
		}
		off += len(p)
	})
	return b.String()
}

// String builds the whole new text (tests, small texts).
func (s spliced) String() string { return applyReplacements(s.base, s.reps, 0) }
