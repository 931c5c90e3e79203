package fsops

import (
	"strings"
	"unicode/utf8"
)

// Rust's Unicode meanings of the Perl classes, in Go syntax (for use inside brackets).
const (
	uniDigit = `\p{Nd}`
	uniWord  = `\p{L}\p{Nl}\p{M}\p{Nd}\p{Pc}`
	uniSpace = `\t-\r \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}`
)

// unicodePerlClasses rewrites \d \w \s (and their negations) to the Unicode classes
// ripgrep's regex engine gives them; Go's are ASCII-only. Escapes, \p{…}, \x{…} and
// \Q…\E are copied as they are.
func unicodePerlClasses(p string) string {
	if !strings.Contains(p, `\`) {
		return p
	}
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			e := p[i+1]
			if rep, ok := perlClassReplacement(e, inClass); ok {
				b.WriteString(rep)
				i++
				continue
			}
			n := escapeLen(p[i:])
			b.WriteString(p[i : i+n])
			i += n - 1
		case inClass && c == '[' && strings.HasPrefix(p[i:], "[:"):
			j := strings.Index(p[i+2:], ":]")
			if j < 0 {
				b.WriteString(p[i:])
				return b.String()
			}
			b.WriteString(p[i : i+2+j+2])
			i += 2 + j + 1
		case !inClass && c == '[':
			inClass = true
			b.WriteByte(c)
			if i+1 < len(p) && p[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(p) && p[i+1] == ']' { // a leading ']' is literal
				b.WriteByte(']')
				i++
			}
		case inClass && c == ']':
			inClass = false
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func perlClassReplacement(e byte, inClass bool) (string, bool) {
	switch e {
	case 'd':
		return uniDigit, true
	case 'D':
		return `\P{Nd}`, true
	case 'w':
		if inClass {
			return uniWord, true
		}
		return "[" + uniWord + "]", true
	case 's':
		if inClass {
			return uniSpace, true
		}
		return "[" + uniSpace + "]", true
	case 'W':
		if !inClass {
			return "[^" + uniWord + "]", true
		}
	case 'S':
		if !inClass {
			return "[^" + uniSpace + "]", true
		}
	}
	return "", false
}

// escapeLen is the length of the escape sequence at the start of s (s[0] is '\\').
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case 'p', 'P', 'x':
		if len(s) > 2 && s[2] == '{' {
			if j := strings.IndexByte(s, '}'); j >= 0 {
				return j + 1
			}
			return len(s)
		}
		if s[1] == 'x' {
			return min(4, len(s))
		}
		return min(3, len(s))
	case 'Q':
		if j := strings.Index(s, `\E`); j >= 0 {
			return j + 2
		}
		return len(s)
	}
	_, n := utf8.DecodeRuneInString(s[1:])
	return 1 + n
}
