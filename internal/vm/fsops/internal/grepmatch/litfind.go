package grepmatch

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

// litFinder finds a byte string in a buffer the way fast grep tools do: memchr
// (bytes.IndexByte, vectorized) for the string's rarest byte, then a comparison around
// each hit. Plain bytes.Index keys on the first byte, which in source code is often
// common ("n", "e", " "), and then crawls.
//
// With fold set, ASCII letters match in either case. exact says a hit is a real
// occurrence; when false (a folded string with letters whose Unicode case class leaves
// ASCII, like k and the Kelvin sign), hits are only candidates for the caller to verify.
type litFinder struct {
	lit    []byte
	fold   bool
	exact  bool
	rare   int  // index in lit of the byte searched for
	lo, up byte // that byte in both cases (equal unless fold and a letter)
	// pair, when set, is the rare byte and the next rarest one at another offset, for
	// indexPair (on a CPU with the SIMD loop). An exact finder of two or more bytes
	// has one; an inexact one takes its pair from run, a run of bytes of lit that fold
	// to ASCII only and so stay side by side in any occurrence, with the pair's
	// offsets counted from the run's start; its hits are then checked rune by rune
	// (verifyAround), so that only real occurrences come out as candidates.
	pair   bool
	p1, p2 pairByte
	run    [2]int
}

// newLitFinder returns a finder for lit, or nil if no byte of lit can be searched for
// (fold with only letters whose case class is not plain ASCII).
func newLitFinder(lit []byte, fold bool) *litFinder {
	f := &litFinder{lit: lit, fold: fold, exact: true, rare: -1}
	best := 1 << 30
	for i, c := range lit {
		if fold && !asciiFoldOnly(c) {
			f.exact = false
			continue
		}
		if score := foldedFrequency(c, fold); score < best {
			best, f.rare = score, i
		}
	}
	if f.rare < 0 {
		return nil
	}
	f.lo, f.up = lit[f.rare], lit[f.rare]
	if fold && isASCIILetter(f.lo) {
		f.lo, f.up = f.lo|0x20, f.lo&^0x20
	}
	if f.exact && len(lit) >= 2 && havePairSearch() {
		second, best := -1, 1<<30
		for i, c := range lit {
			if score := foldedFrequency(c, fold); i != f.rare && score < best {
				best, second = score, i
			}
		}
		a, b := min(f.rare, second), max(f.rare, second)
		f.pair, f.p1, f.p2 = true, newPairByte(lit, a, fold), newPairByte(lit, b, fold)
	}
	if !f.exact && havePairSearch() {
		f.inexactPair()
	}
	return f
}

// inexactPair gives an inexact finder the rarest pair of bytes within one run of
// ASCII-only folds (in "haystack", k and s fold to non-ASCII characters too, so the
// pair comes from "hay" or "tac"), if some run has two bytes: a pair hit is far rarer
// than one of the rare byte.
func (f *litFinder) inexactPair() {
	bestCost := 1 << 30
	for start := 0; start < len(f.lit); {
		if !asciiFoldOnly(f.lit[start]) {
			start++
			continue
		}
		end := start
		for end < len(f.lit) && asciiFoldOnly(f.lit[end]) {
			end++
		}
		if end-start >= 2 {
			i1, i2 := -1, -1 // the run's rarest and next rarest bytes
			for i := start; i < end; i++ {
				switch c := foldedFrequency(f.lit[i], f.fold); {
				case i1 < 0 || c < foldedFrequency(f.lit[i1], f.fold):
					i1, i2 = i, i1
				case i2 < 0 || c < foldedFrequency(f.lit[i2], f.fold):
					i2 = i
				}
			}
			if cost := foldedFrequency(f.lit[i1], f.fold) + foldedFrequency(f.lit[i2], f.fold); cost < bestCost {
				bestCost = cost
				a, b := min(i1, i2), max(i1, i2)
				f.pair, f.run = true, [2]int{start, end}
				f.p1, f.p2 = newPairByte(f.lit, a, true), newPairByte(f.lit, b, true)
				f.p1.at -= start
				f.p2.at -= start
			}
		}
		start = end
	}
}

// foldedFrequency is byteFrequency for c matched in either case when fold is set.
func foldedFrequency(c byte, fold bool) int {
	if fold && isASCIILetter(c) {
		return byteFrequency(c|0x20) + byteFrequency(c&^0x20)
	}
	return byteFrequency(c)
}

// index returns the offset in s of the first occurrence (or candidate, when !exact) of
// the string, or -1.
func (f *litFinder) index(s []byte) int {
	if !f.fold && len(f.lit) == 1 {
		return bytes.IndexByte(s, f.lit[0])
	}
	n := len(f.lit)
	if !f.exact && f.pair {
		// A verified occurrence, returned as a candidate all the same: the caller
		// knows neither where it starts nor its length (a fold may take 3 bytes).
		runLen := f.run[1] - f.run[0]
		for pos := 0; ; {
			j := indexPair(s[pos:], runLen, f.p1, f.p2)
			if j < 0 {
				return -1
			}
			if at := pos + j; f.verifyAround(s, at) {
				return at
			}
			pos += j + 1
		}
	}
	if !f.exact {
		// Only a candidate: return the rare byte itself, which lies on the line of any
		// occurrence (the string's start may be further back, by a multi-byte fold).
		lo, up := bytes.IndexByte(s, f.lo), -1
		if f.up != f.lo {
			up = bytes.IndexByte(s, f.up)
		}
		if lo < 0 || (up >= 0 && up < lo) {
			return up
		}
		return lo
	}
	if f.pair {
		return f.indexByPair(s)
	}
	pos, misses := 0, 0
	nextLo, nextUp := -2, -2 // -2: not looked up yet; -1: none
	for {
		// The next position of the rare byte (either case) at or after pos+rare.
		from := pos + f.rare
		if from >= len(s) {
			return -1
		}
		if nextLo != -1 && nextLo < from {
			nextLo = litIndexByteFrom(s, f.lo, from)
		}
		if f.up != f.lo && nextUp != -1 && nextUp < from {
			nextUp = litIndexByteFrom(s, f.up, from)
		}
		hit := nextLo
		if f.up != f.lo && (hit < 0 || (nextUp >= 0 && nextUp < hit)) {
			hit = nextUp
		}
		if hit < 0 {
			return -1
		}
		start := hit - f.rare
		if start+n <= len(s) {
			if f.matchAt(s[start : start+n]) {
				return start
			}
		}
		pos = start + 1
		// A rare byte that keeps hitting without matches is not rare here: hand the rest
		// of the search to bytes.Index, as the standard library's own cutover does.
		if misses++; !f.fold && misses > 8+(pos>>4) {
			if i := bytes.Index(s[pos:], f.lit); i >= 0 {
				return pos + i
			}
			return -1
		}
	}
}

// indexByPair is index for a finder with a pair: each candidate of the pair search is
// compared whole.
func (f *litFinder) indexByPair(s []byte) int {
	n := len(f.lit)
	for pos, misses := 0, 0; ; misses++ {
		j := indexPair(s[pos:], n, f.p1, f.p2)
		if j < 0 {
			return -1
		}
		at := pos + j
		if f.matchAt(s[at : at+n]) {
			return at
		}
		pos = at + 1
		// As in index: a pair that keeps hitting without matches (text made of the
		// literal's own bytes) is left to bytes.Index.
		if !f.fold && misses > 8+(pos>>4) {
			if i := bytes.Index(s[pos:], f.lit); i >= 0 {
				return pos + i
			}
			return -1
		}
	}
}

// verifyAround reports whether the folded string occurs in s with its run at offset
// at: the run's bytes in either case, and the runes before and after it each equal to
// the string's rune there or to one in its simple case-folding orbit, as a folded
// literal matches in the regexp (an invalid byte reads as U+FFFD there too).
func (f *litFinder) verifyAround(s []byte, at int) bool {
	run := f.lit[f.run[0]:f.run[1]]
	if at+len(run) > len(s) || !asciiFoldEqual(s[at:at+len(run)], run) {
		return false
	}
	for after, p := f.lit[f.run[1]:], at+len(run); len(after) > 0; {
		want, n := utf8.DecodeRune(after)
		got, m := utf8.DecodeRune(s[p:])
		if m == 0 || !foldEqual(got, want) {
			return false
		}
		after, p = after[n:], p+m
	}
	for before, p := f.lit[:f.run[0]], at; len(before) > 0; {
		want, n := utf8.DecodeLastRune(before)
		got, m := utf8.DecodeLastRune(s[:p])
		if m == 0 || !foldEqual(got, want) {
			return false
		}
		before, p = before[:len(before)-n], p-m
	}
	return true
}

// foldEqual reports whether r is c or in c's simple case-folding orbit.
func foldEqual(r, c rune) bool {
	if r == c {
		return true
	}
	for x := unicode.SimpleFold(c); x != c; x = unicode.SimpleFold(x) {
		if x == r {
			return true
		}
	}
	return false
}

// asciiFoldEqual compares equal-length byte strings with ASCII letters in either case.
func asciiFoldEqual(a, b []byte) bool {
	for i, c := range a {
		if l := b[i]; c != l && !(isASCIILetter(c) && c|0x20 == l|0x20) {
			return false
		}
	}
	return true
}

func (f *litFinder) matchAt(w []byte) bool {
	if !f.fold {
		return bytes.Equal(w, f.lit)
	}
	for i, c := range w {
		l := f.lit[i]
		if c != l && !(isASCIILetter(c) && c|0x20 == l|0x20) {
			return false
		}
	}
	return true
}

func litIndexByteFrom(s []byte, c byte, from int) int {
	if i := bytes.IndexByte(s[from:], c); i >= 0 {
		return from + i
	}
	return -1
}

func isASCIILetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

// asciiFoldOnly reports whether every character equal to c under Unicode simple case
// folding is ASCII, so an ASCII-only comparison finds all of them. It is false for
// non-ASCII bytes and for k and s (the Kelvin sign and long s fold to them).
func asciiFoldOnly(c byte) bool {
	if c >= 0x80 {
		return false
	}
	for r := unicode.SimpleFold(rune(c)); r != rune(c); r = unicode.SimpleFold(r) {
		if r >= 0x80 {
			return false
		}
	}
	return true
}

// byteFrequency is a rough rank of how common a byte is in source code and prose
// (higher is more common); it only has to pick a rare byte of a pattern.
func byteFrequency(c byte) int {
	const common = " etaoinsrhldcum\n\t"
	if i := bytes.IndexByte([]byte(common), c); i >= 0 {
		return 1000 - 20*i
	}
	switch {
	case c >= 'a' && c <= 'z':
		const byRank = "pfgwybvkxjqz" // the remaining lowercase letters, most common first
		if i := bytes.IndexByte([]byte(byRank), c); i >= 0 {
			return 500 - 40*i
		}
		return 100
	case c >= 'A' && c <= 'Z':
		return 120
	case c >= '0' && c <= '9':
		return 200
	case c == '.' || c == ',' || c == '(' || c == ')' || c == '_' || c == '=' || c == '"':
		return 300
	case c == ';' || c == '/' || c == '-' || c == ':' || c == '{' || c == '}' || c == '\'' || c == '*':
		return 200
	case c < 0x20 || c >= 0x80:
		return 10
	}
	return 80
}
