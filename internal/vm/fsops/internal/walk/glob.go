package walk

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// CompileGlob translates a glob into an anchored regular expression with the semantics
// of Rust's globset crate, which both ripgrep (ignore files, --glob) and fd (--glob) use
// with literal_separator and backslash escapes on:
//
//   - `*` and `?` never match `/`; `[...]`/`[!...]`/`[^...]` are classes; `{a,b}` alternates;
//   - `**` is recursive only as a whole path component: `**/x` (any leading directories,
//     or none), `x/**` (everything below x), `a/**/b` (zero or more directories between);
//     elsewhere it is an ordinary `*`;
//   - `\c` matches c literally.
//
// A leading "./" is not special: callers strip it the way pi does.
//
// ignoreCase folds ASCII letters only: globset (behind fd, ripgrep and the ignore crate)
// matches bytes, where (?i) cannot fold é into É.
func CompileGlob(pattern string, ignoreCase bool) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("(?s)^")
	if err := writeGlob(&b, pattern, false, ignoreCase); err != nil {
		return nil, err
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// writeGlob appends the regexp for glob p; inAlt means p is one branch of {…}, where
// ',' and '}' end the branch and are handled by the caller.
func writeGlob(b *strings.Builder, p string, inAlt, fold bool) error {
	for i := 0; i < len(p); {
		c := p[i]
		switch c {
		case '\\':
			if i+1 >= len(p) {
				return globError(`dangling '\'`)
			}
			r, n := nextRune(p[i+1:])
			writeLiteral(b, r, fold)
			i += 1 + n
		case '?':
			b.WriteString("[^/]")
			i++
		case '*':
			j := i
			for j < len(p) && p[j] == '*' {
				j++
			}
			if j-i >= 2 && (i == 0 || p[i-1] == '/') && (j == len(p) || p[j] == '/') && !inAlt {
				writeDoubleStar(b, i == 0, j == len(p))
				if j < len(p) {
					j++ // the '/' after ** is part of the recursive match
				}
			} else {
				b.WriteString("[^/]*")
			}
			i = j
		case '[':
			n, err := writeClass(b, p[i:], fold)
			if err != nil {
				return err
			}
			i += n
		case '}':
			if !inAlt {
				return globError("unopened alternate group; missing '{' (maybe escape '}' with '[}]'?)")
			}
			b.WriteString(regexp.QuoteMeta("}"))
			i++
		case '{':
			if inAlt {
				return globError("nested alternate groups are not allowed")
			}
			n, err := writeAlternation(b, p[i:], fold)
			if err != nil {
				return err
			}
			i += n
		default:
			r, n := nextRune(p[i:])
			writeLiteral(b, r, fold)
			i += n
		}
	}
	return nil
}

// writeDoubleStar writes a recursive `**` component. The '/' before it (if any) has
// already been written, so the forms become: "**" alone, "**/" prefix, "/**" suffix and
// "/**/" infix.
func writeDoubleStar(b *strings.Builder, atStart, atEnd bool) {
	switch {
	case atStart && atEnd:
		b.WriteString(".*")
	case atStart:
		b.WriteString("(?:.*/)?")
	case atEnd:
		// "x/**": the "/" is written; anything (at least one more byte) below x.
		b.WriteString(".+")
	default:
		// "a/**/b": the first "/" is written; zero or more directories, then "b".
		b.WriteString("(?:.*/)?")
	}
}

// writeClass writes a [...] class starting at p[0]=='[' and returns the bytes consumed.
func writeClass(b *strings.Builder, p string, fold bool) (int, error) {
	i := 1
	var cls strings.Builder
	cls.WriteByte('[')
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		cls.WriteByte('^')
		i++
	}
	first := true
	for {
		if i >= len(p) {
			return 0, globError("unclosed character class; missing ']'")
		}
		if p[i] == ']' && !first {
			i++
			break
		}
		first = false
		r, n := nextRune(p[i:])
		if r == "\\" && i+1 < len(p) {
			r, n = nextRune(p[i+1:])
			n++
		}
		cls.WriteString(classQuote(r))
		i += n
		lo, hi := r, r
		if i+1 < len(p) && p[i] == '-' && p[i+1] != ']' {
			var m int
			hi, m = nextRune(p[i+1:])
			cls.WriteByte('-')
			cls.WriteString(classQuote(hi))
			i += 1 + m
		}
		if fold {
			writeFoldedRange(&cls, lo, hi)
		}
	}
	cls.WriteByte(']')
	b.WriteString(cls.String())
	return i, nil
}

// writeAlternation writes {a,b,…} starting at p[0]=='{' and returns the bytes consumed.
func writeAlternation(b *strings.Builder, p string, fold bool) (int, error) {
	var branches []string
	depthClass := false
	start := 1
	for i := 1; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\':
			i++
		case c == '[':
			depthClass = true
		case c == ']':
			depthClass = false
		case depthClass:
		case c == ',':
			branches = append(branches, p[start:i])
			start = i + 1
		case c == '}':
			branches = append(branches, p[start:i])
			b.WriteString("(?:")
			for k, br := range branches {
				if k > 0 {
					b.WriteByte('|')
				}
				if err := writeGlob(b, br, true, fold); err != nil {
					return 0, err
				}
			}
			b.WriteString(")")
			return i + 1, nil
		}
	}
	return 0, globError("unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)")
}

// writeLiteral writes the character r, as either ASCII case when fold is set.
func writeLiteral(b *strings.Builder, r string, fold bool) {
	if c := r[0]; fold && len(r) == 1 && (c|0x20 >= 'a' && c|0x20 <= 'z') {
		b.WriteString("[" + string(c|0x20) + string(c&^0x20) + "]")
		return
	}
	b.WriteString(regexp.QuoteMeta(r))
}

// writeFoldedRange adds to a class the other ASCII case of the letters in lo-hi.
func writeFoldedRange(cls *strings.Builder, lo, hi string) {
	l, _ := utf8.DecodeRuneInString(lo)
	h, _ := utf8.DecodeRuneInString(hi)
	for _, span := range [][2]rune{{'a', 'z'}, {'A', 'Z'}} {
		a, z := max(l, span[0]), min(h, span[1])
		if a > z {
			continue
		}
		cls.WriteString(string(a^0x20) + "-" + string(z^0x20))
	}
}

func nextRune(s string) (string, int) {
	for i := range s {
		if i > 0 {
			return s[:i], i
		}
	}
	return s, len(s)
}

func classQuote(r string) string {
	switch r {
	case "\\", "]", "[", "^", "-":
		return "\\" + r
	}
	return r
}

// globError is a glob syntax error, worded as Rust's globset words it (fd shows it).
type globError string

func (e globError) Error() string { return string(e) }

// GlobErrorText is the globset wording of a CompileGlob error.
func GlobErrorText(err error) string { return err.Error() }
