package fsops

import (
	"errors"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// grepPattern is a compiled grep pattern: a regexp that can never match a line
// terminator, so run over a whole file it only ever matches within one line, as
// ripgrep's line-oriented search does; plus an optional literal every match contains,
// used to find candidate lines quickly.
type grepPattern struct {
	re *regexp.Regexp
	// finds locate byte strings one of which every match contains (none if no such set
	// is known), so candidate lines are found with memchr instead of running the regexp
	// over everything.
	finds []*litFinder
	// whole says a found occurrence is itself a match: the regexp is that literal.
	whole bool
	// bytes, when there are no finds, is a set of bytes one of which every match
	// contains (from a required character class), to skip lines cheaply; nil if unknown.
	bytes *[256]bool
}

// compileGrepPattern compiles pattern as ripgrep would receive it from pi.
//
// Go's RE2 syntax is used where ripgrep has Rust's regex crate. The two agree on most
// syntax; these ripgrep patterns are rejected or read differently here:
//   - look-around ((?=…), (?!…), (?<=…), (?<!…)) and backreferences (\1) — rejected by
//     ripgrep too without --pcre2, which pi never passes; only the error text differs;
//   - character-class set operations ([a-z&&[^x]], --, ~~) and verbose mode (?x) —
//     rejected here;
//   - \d, \w and \s (and \D, \W, \S outside brackets) are rewritten to Rust's Unicode
//     classes; \W and \S inside brackets and \b stay ASCII-only, as Go defines them.
func compileGrepPattern(pattern string, literal, ignoreCase bool) (*grepPattern, error) {
	if literal {
		if strings.Contains(pattern, "\n") {
			return nil, errors.New(`the literal "\n" is not allowed in a regex`)
		}
		pattern = regexp.QuoteMeta(pattern)
	}
	if !literal {
		pattern = unicodePerlClasses(pattern)
	}
	flags := syntax.Perl &^ syntax.OneLine // ^ and $ match at line boundaries
	if ignoreCase {
		flags |= syntax.FoldCase
	}
	tree, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil, grepSyntaxError(pattern, err)
	}
	if err := stripNewlines(tree); err != nil {
		return nil, err
	}
	tree = tree.Simplify()
	re, err := regexp.Compile(tree.String())
	if err != nil {
		return nil, grepSyntaxError(pattern, err)
	}
	p := &grepPattern{re: re}
	for _, l := range requiredLiterals(tree) {
		f := newLitFinder(l.text, l.fold)
		if f == nil {
			p.finds = nil
			break
		}
		p.finds = append(p.finds, f)
	}
	p.whole = len(p.finds) == 1 && p.finds[0].exact && tree.Op == syntax.OpLiteral
	if len(p.finds) == 0 {
		p.bytes = requiredBytes(tree)
	}
	return p, nil
}

// grepSyntaxError words a parse error like ripgrep's "regex parse error", saying when
// the construct is one Go's RE2 syntax lacks.
func grepSyntaxError(pattern string, err error) error {
	msg := err.Error()
	var se *syntax.Error
	if errors.As(err, &se) {
		msg = se.Code.String() + ": " + se.Expr
		switch {
		case strings.HasPrefix(se.Expr, "(?=") || strings.HasPrefix(se.Expr, "(?!") ||
			strings.HasPrefix(se.Expr, "(?<=") || strings.HasPrefix(se.Expr, "(?<!"):
			msg = "look-around, including look-ahead and look-behind, is not supported"
		case se.Code == syntax.ErrInvalidEscape && len(se.Expr) == 2 && se.Expr[1] >= '1' && se.Expr[1] <= '9':
			msg = "backreferences are not supported"
		}
	}
	return errors.New("regex parse error:\n    " + pattern + "\nerror: " + msg +
		"\n(grep uses RE2 regular expressions: no look-around, no backreferences)")
}

// stripNewlines rewrites t so that no part of it matches '\n', as ripgrep does for its
// line terminator: classes lose '\n', "." never matches it, and a literal newline is an
// error.
func stripNewlines(t *syntax.Regexp) error {
	switch t.Op {
	case syntax.OpLiteral:
		for _, r := range t.Rune {
			if r == '\n' {
				return errors.New(`the literal "\n" is not allowed in a regex`)
			}
		}
	case syntax.OpAnyChar:
		t.Op = syntax.OpAnyCharNotNL
	case syntax.OpCharClass:
		var out []rune
		for i := 0; i+1 < len(t.Rune); i += 2 {
			lo, hi := t.Rune[i], t.Rune[i+1]
			if lo <= '\n' && '\n' <= hi {
				if lo < '\n' {
					out = append(out, lo, '\n'-1)
				}
				if hi > '\n' {
					out = append(out, '\n'+1, hi)
				}
				continue
			}
			out = append(out, lo, hi)
		}
		t.Rune = out
		if len(out) == 0 {
			t.Op = syntax.OpNoMatch
		}
	}
	for _, s := range t.Sub {
		if err := stripNewlines(s); err != nil {
			return err
		}
	}
	return nil
}

// requiredLit is one literal of a prefilter set.
type requiredLit struct {
	text []byte
	fold bool
}

// maxRequiredLits bounds a prefilter set; beyond it the regexp runs on its own.
const maxRequiredLits = 8

// requiredLiterals returns literals one of which every match of t contains — from a
// literal, the best piece of a concatenation, or every branch of an alternation — or
// nil when no such set is known.
func requiredLiterals(t *syntax.Regexp) []requiredLit {
	switch t.Op {
	case syntax.OpLiteral:
		b := make([]byte, 0, len(t.Rune))
		for _, r := range t.Rune {
			b = utf8.AppendRune(b, r)
		}
		return []requiredLit{{text: b, fold: t.Flags&syntax.FoldCase != 0}}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(t.Sub[0])
	case syntax.OpRepeat:
		if t.Min >= 1 {
			return requiredLiterals(t.Sub[0])
		}
	case syntax.OpConcat:
		var best []requiredLit
		for _, s := range t.Sub {
			if set := requiredLiterals(s); set != nil && betterLits(set, best) {
				best = set
			}
		}
		return best
	case syntax.OpAlternate:
		var all []requiredLit
		for _, s := range t.Sub {
			set := requiredLiterals(s)
			if set == nil || len(all)+len(set) > maxRequiredLits {
				return nil
			}
			all = append(all, set...)
		}
		return all
	}
	return nil
}

// betterLits prefers the set whose shortest literal is longer, then the smaller set.
func betterLits(a, b []requiredLit) bool {
	if b == nil {
		return true
	}
	ma, mb := shortestLit(a), shortestLit(b)
	if ma != mb {
		return ma > mb
	}
	return len(a) < len(b)
}

func shortestLit(set []requiredLit) int {
	m := -1
	for _, l := range set {
		if m < 0 || len(l.text) < m {
			m = len(l.text)
		}
	}
	return m
}

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

// requiredBytes returns a set of bytes one of which every match of t contains: the
// cheapest required character class (a UTF-8 byte set: any non-ASCII member admits all
// bytes >= 0x80), or the union over an alternation's branches; nil if none is known.
func requiredBytes(t *syntax.Regexp) *[256]bool {
	switch t.Op {
	case syntax.OpCharClass:
		var set [256]bool
		for i := 0; i+1 < len(t.Rune); i += 2 {
			lo, hi := t.Rune[i], t.Rune[i+1]
			for r := lo; r <= hi && r < utf8.RuneSelf; r++ {
				set[r] = true
			}
			if hi >= utf8.RuneSelf {
				for b := utf8.RuneSelf; b < 256; b++ {
					set[b] = true
				}
			}
		}
		return &set
	case syntax.OpLiteral:
		if len(t.Rune) == 0 || t.Flags&syntax.FoldCase != 0 {
			return nil
		}
		var set [256]bool
		set[utf8.AppendRune(nil, t.Rune[0])[0]] = true
		return &set
	case syntax.OpCapture, syntax.OpPlus:
		return requiredBytes(t.Sub[0])
	case syntax.OpRepeat:
		if t.Min >= 1 {
			return requiredBytes(t.Sub[0])
		}
	case syntax.OpConcat:
		var best *[256]bool
		for _, s := range t.Sub {
			if set := requiredBytes(s); set != nil && (best == nil || byteSetCost(set) < byteSetCost(best)) {
				best = set
			}
		}
		return best
	case syntax.OpAlternate:
		var all [256]bool
		for _, s := range t.Sub {
			set := requiredBytes(s)
			if set == nil {
				return nil
			}
			for b, in := range set {
				all[b] = all[b] || in
			}
		}
		return &all
	}
	return nil
}

func byteSetCost(set *[256]bool) int {
	cost := 0
	for b, in := range set {
		if in {
			cost += byteFrequency(byte(b))
		}
	}
	return cost
}
