package collation

import (
	"bytes"
	"sort"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Buffer holds a Key's scratch space; the zero value is ready. It is not for concurrent use.
type Buffer struct {
	nfd  []byte
	ces  []ce
	skip []byte
}

// Key appends to dst the sort key of s: bytes.Compare of two keys orders their strings
// as ICU's root collation at tertiary strength (Intl.Collator's default), and keys are
// equal exactly when ICU finds the strings equal.
func Key(buf *Buffer, dst []byte, s string) []byte {
	t := loaded()
	buf.ces = buf.ces[:0]
	if isASCII(s) {
		for i := 0; i < len(s); i++ {
			if c := t.ascii[s[i]]; c != 0 {
				buf.ces = append(buf.ces, c)
			}
		}
	} else {
		buf.nfd = norm.NFD.AppendString(buf.nfd[:0], s)
		t.reorder(buf)
		buf.ces = t.collationElements(buf, buf.nfd)
	}
	return appendKey(dst, buf.ces)
}

// Compare is -1, 0 or +1 as a sorts before, with or after b.
func Compare(a, b string) int {
	var buf Buffer
	ka := Key(&buf, nil, a)
	return bytes.Compare(ka, Key(&buf, nil, b))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// cccOf is c's canonical combining class, Unicode 17's where Go's tables are older.
func (t *tables) cccOf(s []byte) (uint8, int) {
	p := norm.NFD.Properties(s)
	if v := p.CCC(); v != 0 {
		return v, p.Size()
	}
	c, n := utf8.DecodeRune(s)
	if c < t.minCCC {
		return 0, n
	}
	return t.ccc[c], n
}

// reorder puts buf.nfd's marks in canonical order where Go's NFD left marks that Unicode
// 16 and 17 added (their class is 0 to it) out of it.
func (t *tables) reorder(buf *Buffer) {
	s := buf.nfd
	newer := false
	for i := 0; i < len(s) && !newer; {
		c, n := utf8.DecodeRune(s[i:])
		_, newer = t.ccc[c]
		i += n
	}
	if !newer {
		return
	}
	type mark struct {
		ccc   uint8
		bytes []byte
	}
	out := make([]byte, 0, len(s))
	var run []mark
	flush := func() {
		sort.SliceStable(run, func(i, j int) bool { return run[i].ccc < run[j].ccc })
		for _, m := range run {
			out = append(out, m.bytes...)
		}
		run = run[:0]
	}
	for i := 0; i < len(s); {
		ccc, n := t.cccOf(s[i:])
		if ccc == 0 {
			flush()
			out = append(out, s[i:i+n]...)
		} else {
			run = append(run, mark{ccc, s[i : i+n]})
		}
		i += n
	}
	flush()
	buf.nfd = out
}

// collationElements appends the CEs of s, which is in NFD, to buf.ces: the longest
// contraction at each place (extended, as the UCA says, by combining marks further on
// that nothing blocks), else the code point's own.
func (t *tables) collationElements(buf *Buffer, s []byte) []ce {
	out := buf.ces
	for i := 0; i < len(s); {
		c, n := utf8.DecodeRune(s[i:])
		if !t.starts[c] {
			out = t.lookup(c, out)
			i += n
			continue
		}
		end, match := i+n, string(s[i:i+n])
		for j := i + n; j < len(s); {
			_, m := utf8.DecodeRune(s[j:])
			k := string(s[i : j+m])
			if _, ok := t.contractions[k]; ok {
				end, match = j+m, k
			} else if !t.prefixes[k] {
				break
			}
			j += m
		}
		// Discontiguous: a following mark that nothing between blocks may extend the match
		// (or the starter alone), the marks skipped coming after it.
		buf.skip = buf.skip[:0]
		extended := false
		var lastCCC uint8
		j := end
		for j < len(s) {
			ccc, m := t.cccOf(s[j:])
			if ccc == 0 {
				break
			}
			if ext := match + string(s[j:j+m]); ccc > lastCCC {
				if _, ok := t.contractions[ext]; ok {
					match, extended = ext, true
					j += m
					continue
				}
			}
			lastCCC = ccc
			buf.skip = append(buf.skip, s[j:j+m]...)
			j += m
		}
		ces, ok := t.contractions[match]
		if !ok {
			out = t.lookup(c, out)
			i += n
			continue
		}
		out = append(out, ces...)
		if !extended {
			i = end
			continue
		}
		for k := 0; k < len(buf.skip); {
			c, m := utf8.DecodeRune(buf.skip[k:])
			out = t.lookup(c, out)
			k += m
		}
		i = j
	}
	return out
}

// appendKey writes primaries, secondaries and tertiaries of ces, each level ended by a 0
// byte below every weight's first byte.
func appendKey(dst []byte, ces []ce) []byte {
	for _, c := range ces {
		if p := c.primary(); p != 0 {
			p += 1 << 16
			dst = append(dst, byte(p>>16), byte(p>>8), byte(p))
		}
	}
	dst = append(dst, 0)
	for _, c := range ces {
		if s := c.secondary(); s != 0 {
			s += 1 << 8
			dst = append(dst, byte(s>>8), byte(s))
		}
	}
	dst = append(dst, 0)
	for _, c := range ces {
		if t := c.tertiary(); t != 0 {
			t += 1 << 8
			dst = append(dst, byte(t>>8), byte(t))
		}
	}
	return dst
}
