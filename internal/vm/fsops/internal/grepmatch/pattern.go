package grepmatch

import (
	"encoding/binary"
	"errors"
	"regexp"
	"regexp/syntax"
	"slices"
	"unicode/utf8"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/rxsyntax"
)

// Pattern is a compiled grep pattern: a regexp that can never match a line
// terminator, so run over a whole file it only ever matches within one line, as
// ripgrep's line-oriented search does; plus an optional literal every match contains,
// used to find candidate lines quickly.
type Pattern struct {
	re *regexp.Regexp
	// ascii, when set, is re for lines of ASCII text only (see ASCIIOnly): much faster
	// than re when the pattern has big Unicode classes.
	ascii *regexp.Regexp
	// vm, when set, matches lines beyond ASCII for a pattern with Unicode word
	// boundaries, which Go's regexp (ASCII-only \b) cannot.
	vm *rxVM
	// chain, when set, are literals the pattern is, in order, joined by ".*" (like
	// "func.*zzq"): a line matches if they occur in it in that order, which is checked
	// without the regexp (Go's backtracker is slow at ".*").
	chain []*litFinder
	// after, when set, is what must match right after the one prefilter literal (the
	// rest of a top-level concatenation), anchored: a cheap test that rules out most
	// candidate lines before the whole pattern runs (in "\w+_\d{3}" a "_" must be
	// followed by three digits).
	after *regexp.Regexp
	// afterFirst, set with after, holds the bytes the character after the literal can
	// start with: most candidates fail on it without running after (in "\w+_\d{3}"
	// few "_" are followed by a digit). It holds even where after is not used.
	afterFirst *[256]bool
	// before, when set, are the ranges (Go's syntax.Regexp.Rune pairs) of the class the
	// character right before the literal must be in (the last part of the concatenation
	// before it): in "[A-Z][a-z]+Error\(" the "Error(" of "err.Error()" is ruled out.
	before      []rune
	beforeASCII [utf8.RuneSelf]bool // before's ASCII members, for a table lookup
	// finds locate byte strings one of which every match contains (none if no such set
	// is known), so candidate lines are found with memchr instead of running the regexp
	// over everything.
	finds []*litFinder
	// endClass, when set, is the class (range pairs) of the last character of every
	// match, which ends at the line's end (a pattern ending in "\s+$"): a line not
	// ending in it cannot match. endASCII holds its ASCII members.
	endClass []rune
	endASCII [utf8.RuneSelf]bool
	// runSet and runLen, when there are no finds and runLen > 1, say every match
	// holds runLen consecutive bytes of runSet (a pattern like "[0-9a-f]{32}", which
	// has no literal and whose bytes are on most lines): candidates are found by
	// indexRun, which can skip runLen bytes at a time, instead of line by line.
	runSet *[256]bool
	runLen int
	// whole says a found occurrence is itself a match: the regexp is that literal.
	whole bool
	// bytes, when there are no finds, is a set of bytes one of which every match
	// contains (from a required character class), to skip lines cheaply; nil if unknown.
	bytes *[256]bool
}

// Compile compiles pattern as ripgrep 13 receives it from pi (literal being
// --fixed-strings, ignoreCase --ignore-case): parsed with the syntax of Rust's regex
// crate, rejected with ripgrep's own error text where ripgrep rejects it, and otherwise
// translated to an equivalent Go regexp (see rxsyntax.Translate for the few constructs Go
// can only approximate).
func Compile(pattern string, literal, ignoreCase bool) (*Pattern, error) {
	var h *rxsyntax.Hir
	if literal {
		h = &rxsyntax.Hir{Op: rxsyntax.OpConcat}
		for _, r := range pattern {
			h.Subs = append(h.Subs, &rxsyntax.Hir{Op: rxsyntax.OpLiteral, Rune: r, Fold: ignoreCase && rxsyntax.HasCaseMapping(r)})
		}
		if !rxsyntax.StripNewline(h) {
			return nil, errors.New(rxsyntax.ErrorText(rxsyntax.NewlineError))
		}
	} else {
		var msg string
		if h, msg = rxsyntax.Translate(pattern, ignoreCase); msg != "" {
			return nil, errors.New(msg)
		}
	}
	goSyntax, msg := rxsyntax.GoSyntax(h)
	if msg != "" {
		return nil, errors.New(msg)
	}
	tree, re, err := compileGoSyntax(goSyntax)
	if err != nil {
		return nil, err
	}
	p := &Pattern{re: re}
	if rxsyntax.HasUnicodeWordBoundary(h) {
		p.vm = newRxVM(h)
	}
	if asciiSyntax, _ := rxsyntax.GoSyntax(rxsyntax.ASCIIOnly(h)); asciiSyntax != goSyntax {
		if _, p.ascii, err = compileGoSyntax(asciiSyntax); err != nil {
			return nil, err
		}
	}
	for _, l := range requiredLiterals(tree) {
		f := newLitFinder(l.text, l.fold)
		if f == nil {
			p.finds = nil
			break
		}
		p.finds = append(p.finds, f)
	}
	p.whole = len(p.finds) == 1 && p.finds[0].exact && tree.Op == syntax.OpLiteral
	p.chain = literalChain(tree)
	if len(p.finds) == 1 && !p.whole && p.chain == nil {
		p.before, p.after, p.afterFirst = aroundLiteral(tree, p.finds[0])

		for c := range p.beforeASCII {
			p.beforeASCII[c] = p.before != nil && inRanges(p.before, rune(c))
		}
	}
	if len(p.finds) == 0 {
		p.bytes = requiredBytes(tree)
		// A run is the better filter unless its class is more common than the
		// rarest byte set the pattern needs anyway.
		if set, n := requiredRun(tree); set != nil && (p.bytes == nil || byteSetCost(set) <= byteSetCost(p.bytes)) {
			p.runSet, p.runLen = set, n
		}
	}
	if p.endClass = endAnchoredClass(tree); p.endClass != nil {
		for c := range p.endASCII {
			p.endASCII[c] = inRanges(p.endClass, rune(c))
		}
	}
	return p, nil
}

// requiredRun returns the longest run of consecutive parts of a concatenation that
// each consume one character of the same class, or more of it (x+, x{2,}), as that
// class in UTF-8 bytes (every byte from 0x80 when it goes beyond ASCII, so a run of n
// characters is at least n bytes of the set) and the run's length in characters; nil,
// 0 when there is no run of two. Parts of different classes would make a run of their
// union, which is most text ("[A-Z][a-z]+" is any word).
func requiredRun(t *syntax.Regexp) (*[256]bool, int) {
	if t.Op == syntax.OpCapture {
		return requiredRun(t.Sub[0])
	}
	if t.Op != syntax.OpConcat {
		return nil, 0
	}
	var best *[256]bool
	bestLen := 1
	var cur []rune // the class of the run so far
	n := 0
	for _, s := range flatConcat(t, nil) {
		class, count := s, 1
		switch s.Op {
		case syntax.OpPlus:
			class = s.Sub[0]
		case syntax.OpRepeat:
			class, count = s.Sub[0], s.Min
		}
		if class.Op != syntax.OpCharClass || count < 1 {
			cur, n = nil, 0
			continue
		}
		if !slices.Equal(class.Rune, cur) {
			cur, n = class.Rune, 0
		}
		if n += count; n > bestLen {
			best, bestLen = classBytes(cur), n
		}
	}
	return best, bestLen
}

// classBytes is the set of UTF-8 bytes characters of the class (range pairs) can
// have: its ASCII members, and every byte from 0x80 if it has any member beyond.
func classBytes(ranges []rune) *[256]bool {
	var set [256]bool
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1] && r < utf8.RuneSelf; r++ {
			set[r] = true
		}
		if ranges[i+1] >= utf8.RuneSelf {
			for b := utf8.RuneSelf; b < 256; b++ {
				set[b] = true
			}
		}
	}
	return &set
}

// flatConcat appends the parts of concatenation t, those of nested ones spliced in
// (Simplify leaves "[0-9]{2,}" as a concatenation of its own).
func flatConcat(t *syntax.Regexp, out []*syntax.Regexp) []*syntax.Regexp {
	for _, s := range t.Sub {
		if s.Op == syntax.OpConcat {
			out = flatConcat(s, out)
		} else {
			out = append(out, s)
		}
	}
	return out
}

// indexRun returns the start of the first run of n bytes of set at or after from, or
// -1. It tests the last byte of each n-byte window first: when that byte is not in the
// set, no run can start in the window, and it moves n bytes on.
func indexRun(data []byte, from int, set *[256]bool, n int) int {
	i := from
	for i+n <= len(data) {
		j := i + n - 1
		for j >= i && set[data[j]] {
			j--
		}
		if j < i {
			return i
		}
		i = j + 1
	}
	return -1
}

// endAnchoredClass returns, for a concatenation ending in "$" right after a part that
// ends by consuming a character of a known class, that class; nil otherwise. Lines are
// matched without their terminator, so "$" is the line's end.
func endAnchoredClass(t *syntax.Regexp) []rune {
	if t.Op != syntax.OpConcat || len(t.Sub) < 2 {
		return nil
	}
	switch t.Sub[len(t.Sub)-1].Op {
	case syntax.OpEndLine, syntax.OpEndText:
		return lastClass(t.Sub[len(t.Sub)-2])
	}
	return nil
}

// endOK reports whether line ends in a character of p.endClass.
func (p *Pattern) endOK(line []byte) bool {
	if len(line) == 0 {
		return false
	}
	if c := line[len(line)-1]; c < utf8.RuneSelf {
		return p.endASCII[c]
	}
	r, _ := utf8.DecodeLastRune(line)
	return inRanges(p.endClass, r)
}

// compileGoSyntax compiles a translated pattern.
func compileGoSyntax(goSyntax string) (*syntax.Regexp, *regexp.Regexp, error) {
	tree, err := syntax.Parse(goSyntax, syntax.Perl)
	if err != nil {
		return nil, nil, rxSizeError(err)
	}
	if err := stripNewlines(tree); err != nil {
		return nil, nil, err
	}
	tree = tree.Simplify()
	anchorLineStarts(tree)
	re, err := regexp.Compile(tree.String())
	if err != nil {
		return nil, nil, rxSizeError(err)
	}
	return tree, re, nil
}

// anchorLineStarts turns a "^" (multi-line) that starts the pattern, or each of its
// top-level alternatives, into "\A": the regexp only ever sees one line, where the two
// mean the same, and Go's regexp tries a "\A" pattern at the line's start alone, where
// with "^" it tries every position (an empty-line search took 5x ripgrep's time).
func anchorLineStarts(t *syntax.Regexp) {
	switch t.Op {
	case syntax.OpBeginLine:
		t.Op = syntax.OpBeginText
	case syntax.OpConcat, syntax.OpCapture:
		if len(t.Sub) > 0 {
			anchorLineStarts(t.Sub[0])
		}
	case syntax.OpAlternate:
		for _, s := range t.Sub {
			anchorLineStarts(s)
		}
	}
}

// match reports whether one line (without terminator) matches: with the ASCII-only
// regexp when there is one and the line is ASCII.
func (p *Pattern) match(line []byte) bool {
	if p.chain != nil {
		return chainMatch(p.chain, line)
	}
	if p.ascii == nil && p.vm == nil {
		return p.re.Match(line)
	}
	if isASCII(line) {
		if p.ascii != nil {
			return p.ascii.Match(line)
		}
		return p.re.Match(line)
	}
	if p.vm != nil {
		return p.vm.match(line)
	}
	return p.re.Match(line)
}

// aroundOK reports whether some occurrence of the prefilter literal in line has the
// right character before it and is followed by a match of p.after (a necessary
// condition for line to match).
func (p *Pattern) aroundOK(line []byte) bool {
	f := p.finds[0]
	after := p.after
	if p.vm != nil && after != nil && !isASCII(line) {
		after = nil // it tests word boundaries Go's way, right only on ASCII text
		if p.before == nil {
			return true
		}
	}
	for off := 0; off < len(line); {
		j := f.index(line[off:])
		if j < 0 {
			return false
		}
		at := off + j
		off = at + 1
		if end := at + len(f.lit); p.afterFirst != nil && (end == len(line) || !p.afterFirst[line[end]]) {
			continue
		}
		if p.before != nil {
			if at == 0 {
				continue
			}
			ok := false
			if c := line[at-1]; c < utf8.RuneSelf {
				ok = p.beforeASCII[c]
			} else {
				r, _ := utf8.DecodeLastRune(line[:at])
				ok = inRanges(p.before, r)
			}
			if !ok {
				continue
			}
		}
		if after == nil || after.Match(line[at+len(f.lit):]) {
			return true
		}
	}
	return false
}

// inRanges reports whether r is in the sorted range pairs, by binary search (a Unicode
// class like \w has hundreds).
func inRanges(ranges []rune, r rune) bool {
	lo, hi := 0, len(ranges)/2
	for lo < hi {
		m := (lo + hi) / 2
		switch {
		case r < ranges[2*m]:
			hi = m
		case r > ranges[2*m+1]:
			lo = m + 1
		default:
			return true
		}
	}
	return false
}

// aroundLiteral returns, for a pattern that is a concatenation with the literal f as
// one of its parts, the class of the character right before it (when the part before
// always ends by consuming one) and the rest after it anchored at the start (when it
// starts by consuming a character: an assertion there would need the character
// before, which the test does not see), with the bytes that character can start with;
// each may be nil.
func aroundLiteral(t *syntax.Regexp, f *litFinder) (before []rune, after *regexp.Regexp, first *[256]bool) {
	if t.Op != syntax.OpConcat || !f.exact {
		return nil, nil, nil
	}
	for k, s := range t.Sub {
		if s.Op != syntax.OpLiteral || (s.Flags&syntax.FoldCase != 0) != f.fold || string(s.Rune) != string([]rune(string(f.lit))) {
			continue
		}
		if k > 0 {
			before = lastClass(t.Sub[k-1])
		}
		rest := t.Sub[k+1:]
		if len(rest) > 0 && consumesFirst(rest[0]) {
			b := `\A(?:`
			for _, r := range rest {
				b += r.String()
			}
			if after, _ = regexp.Compile(b + ")"); after != nil {
				first = firstBytes(rest[0])
			}
		}
		return before, after, first
	}
	return nil, nil, nil
}

// firstBytes returns the bytes a match of t, which consumesFirst, can start with: the
// ASCII members of its first character's class, and every byte from 0x80 when the
// class has any member beyond ASCII (a lead byte, or an invalid byte Go reads as
// U+FFFD). nil when not known.
func firstBytes(t *syntax.Regexp) *[256]bool {
	var set [256]bool
	high := func() {
		for b := utf8.RuneSelf; b < 256; b++ {
			set[b] = true
		}
	}
	switch t.Op {
	case syntax.OpLiteral:
		r := t.Rune[0]
		if r >= utf8.RuneSelf || t.Flags&syntax.FoldCase != 0 {
			high() // a folded ASCII letter may also match a non-ASCII one (k, K)
		}
		if r < utf8.RuneSelf {
			set[r] = true
			if t.Flags&syntax.FoldCase != 0 && isASCIILetter(byte(r)) {
				set[r|0x20], set[r&^0x20] = true, true
			}
		}
	case syntax.OpCharClass:
		for i := 0; i+1 < len(t.Rune); i += 2 {
			for r := t.Rune[i]; r <= t.Rune[i+1] && r < utf8.RuneSelf; r++ {
				set[r] = true
			}
			if t.Rune[i+1] >= utf8.RuneSelf {
				high()
			}
		}
	case syntax.OpAnyCharNotNL:
		for b := range set {
			set[b] = b != '\n'
		}
	case syntax.OpAnyChar:
		for b := range set {
			set[b] = true
		}
	case syntax.OpPlus, syntax.OpRepeat, syntax.OpCapture:
		return firstBytes(t.Sub[0])
	case syntax.OpConcat:
		return firstBytes(t.Sub[0])
	default:
		return nil
	}
	return &set
}

// lastClass returns the ranges of the character every match of t ends with, when t
// ends by consuming one character of a class (or a plain literal); nil otherwise.
func lastClass(t *syntax.Regexp) []rune {
	switch t.Op {
	case syntax.OpCharClass:
		return t.Rune
	case syntax.OpLiteral:
		if t.Flags&syntax.FoldCase != 0 || len(t.Rune) == 0 {
			return nil
		}
		r := t.Rune[len(t.Rune)-1]
		return []rune{r, r}
	case syntax.OpPlus, syntax.OpCapture:
		return lastClass(t.Sub[0])
	case syntax.OpRepeat:
		if t.Min >= 1 {
			return lastClass(t.Sub[0])
		}
	case syntax.OpConcat:
		if n := len(t.Sub); n > 0 {
			return lastClass(t.Sub[n-1])
		}
	}
	return nil
}

// consumesFirst reports whether every match of t starts by consuming a character.
func consumesFirst(t *syntax.Regexp) bool {
	switch t.Op {
	case syntax.OpLiteral:
		return len(t.Rune) > 0
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return true
	case syntax.OpPlus:
		return consumesFirst(t.Sub[0])
	case syntax.OpRepeat:
		return t.Min >= 1 && consumesFirst(t.Sub[0])
	case syntax.OpCapture:
		return consumesFirst(t.Sub[0])
	case syntax.OpConcat:
		return len(t.Sub) > 0 && consumesFirst(t.Sub[0])
	}
	return false
}

// isASCII reports whether s has no byte above 0x7F, eight bytes at a time.
func isASCII(s []byte) bool {
	for len(s) >= 8 {
		if binary.LittleEndian.Uint64(s)&0x8080808080808080 != 0 {
			return false
		}
		s = s[8:]
	}
	for _, c := range s {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// rxSizeError words Go's refusal of a translated pattern. Every pattern that reaches
// Go is valid for ripgrep, so the only cause is size (Go limits the program size where
// Rust's regex crate has a 100MB limit on the compiled program): ripgrep's own message
// for an oversized pattern is the closest. Go's reason is kept for errors.Unwrap only.
func rxSizeError(err error) error { return &rxSizeErr{err} }

type rxSizeErr struct{ err error }

func (e *rxSizeErr) Error() string { return rxsyntax.SizeLimitError }
func (e *rxSizeErr) Unwrap() error { return e.err }

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

// literalChain returns the literals of a pattern of the form L1.*L2.*…Ln (n >= 2, any
// ".*" greedy or not, also at the ends), each with an exact finder; nil otherwise.
func literalChain(t *syntax.Regexp) []*litFinder {
	if t.Op != syntax.OpConcat {
		return nil
	}
	var chain []*litFinder
	star := true // a ".*" since the last literal (or the start)
	for _, s := range t.Sub {
		switch {
		case s.Op == syntax.OpLiteral:
			if !star {
				return nil // two literals side by side: not this form
			}
			star = false
			b := make([]byte, 0, len(s.Rune))
			for _, r := range s.Rune {
				b = utf8.AppendRune(b, r)
			}
			f := newLitFinder(b, s.Flags&syntax.FoldCase != 0)
			if f == nil || !f.exact {
				return nil
			}
			chain = append(chain, f)
		case s.Op == syntax.OpStar && s.Sub[0].Op == syntax.OpAnyCharNotNL:
			star = true
		default:
			return nil
		}
	}
	if len(chain) < 2 {
		return nil
	}
	return chain
}

// chainMatch reports whether the chain's literals occur in line in order, without
// overlapping: the earliest occurrence of each after the previous one is the best
// choice, so one pass decides.
func chainMatch(chain []*litFinder, line []byte) bool {
	for _, f := range chain {
		i := f.index(line)
		if i < 0 {
			return false
		}
		line = line[i+len(f.lit):]
	}
	return true
}
