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
	re      *regexp.Regexp
	literal []byte // every match contains this (case-sensitive) byte string; nil if none known
	// whole says the regexp is exactly literal, so finding literal is finding a match.
	whole bool
}

// compileGrepPattern compiles pattern as ripgrep would receive it from pi.
//
// Go's RE2 syntax is used where ripgrep has Rust's regex crate. The two agree on most
// syntax; these ripgrep patterns are rejected or read differently here:
//   - look-around ((?=…), (?!…), (?<=…), (?<!…)) and backreferences (\1) — rejected by
//     ripgrep too without --pcre2, which pi never passes; only the error text differs;
//   - character-class set operations ([a-z&&[^x]], --, ~~) and verbose mode (?x) —
//     rejected here;
//   - \d, \w, \s and \b are ASCII-only in Go but Unicode-aware in Rust, so "\w+" does not
//     match "é" here.
func compileGrepPattern(pattern string, literal, ignoreCase bool) (*grepPattern, error) {
	if literal {
		if strings.Contains(pattern, "\n") {
			return nil, errors.New(`the literal "\n" is not allowed in a regex`)
		}
		if !ignoreCase {
			re := regexp.MustCompile(regexp.QuoteMeta(pattern))
			return &grepPattern{re: re, literal: []byte(pattern), whole: pattern != ""}, nil
		}
		pattern = regexp.QuoteMeta(pattern)
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
	if lit := requiredLiteral(tree); len(lit) > 0 {
		p.literal = lit
		p.whole = tree.Op == syntax.OpLiteral && tree.Flags&syntax.FoldCase == 0
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

// requiredLiteral returns a case-sensitive byte string that every match of t contains
// (the longest one found among the top-level pieces), or nil.
func requiredLiteral(t *syntax.Regexp) []byte {
	var best []rune
	consider := func(s *syntax.Regexp) {
		if s.Op == syntax.OpLiteral && s.Flags&syntax.FoldCase == 0 && len(s.Rune) > len(best) {
			best = s.Rune
		}
	}
	switch t.Op {
	case syntax.OpLiteral:
		consider(t)
	case syntax.OpConcat:
		for _, s := range t.Sub {
			consider(s)
			if s.Op == syntax.OpCapture && len(s.Sub) == 1 {
				consider(s.Sub[0])
			}
		}
	case syntax.OpCapture:
		return requiredLiteral(t.Sub[0])
	}
	if len(best) == 0 {
		return nil
	}
	b := make([]byte, 0, len(best))
	for _, r := range best {
		b = utf8.AppendRune(b, r)
	}
	return b
}
