package fsops

import (
	"errors"
	"regexp"
	"regexp/syntax"
	"strings"
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
