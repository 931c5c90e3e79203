package rxsyntax

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// This file parses grep patterns the way ripgrep 13 does: with the syntax of Rust's
// regex crate (regex-syntax 0.6, the version Debian 12's ripgrep is built with), as
// ripgrep configures it — no octal escapes, a nesting limit of 250. The parser follows
// regex-syntax's rules closely, because what a model sees for a pattern ripgrep
// rejects is ripgrep's error: which construct is wrong, and where (a span, shown with
// carets by rxError.Error).

// rxPos is a position in a pattern: a byte offset, and the 1-based line and column
// (columns count characters) that the error display uses.
type rxPos struct{ off, line, col int }

// rxSpan is a half-open range of a pattern.
type rxSpan struct{ start, end rxPos }

// rxError is a pattern ripgrep rejects: its message and the span(s) it points at.
type rxError struct {
	pattern string
	msg     string
	span    rxSpan
	aux     *rxSpan // the earlier occurrence, for duplicates
}

// The error messages of regex-syntax 0.6, as ripgrep prints them.
const (
	rxErrClassEscapeInvalid      = "invalid escape sequence found in character class"
	rxErrClassRangeInvalid       = "invalid character class range, the start must be <= the end"
	rxErrClassRangeLiteral       = "invalid range boundary, must be a literal"
	rxErrClassUnclosed           = "unclosed character class"
	rxErrDecimalEmpty            = "decimal literal empty"
	rxErrDecimalInvalid          = "decimal literal invalid"
	rxErrEscapeHexEmpty          = "hexadecimal literal empty"
	rxErrEscapeHexInvalid        = "hexadecimal literal is not a Unicode scalar value"
	rxErrEscapeHexInvalidDigit   = "invalid hexadecimal digit"
	rxErrEscapeUnexpectedEOF     = "incomplete escape sequence, reached end of pattern prematurely"
	rxErrEscapeUnrecognized      = "unrecognized escape sequence"
	rxErrFlagDanglingNegation    = "dangling flag negation operator"
	rxErrFlagDuplicate           = "duplicate flag"
	rxErrFlagRepeatedNegation    = "flag negation operator repeated"
	rxErrFlagUnexpectedEOF       = "expected flag but got end of regex"
	rxErrFlagUnrecognized        = "unrecognized flag"
	rxErrGroupNameDuplicate      = "duplicate capture group name"
	rxErrGroupNameEmpty          = "empty capture group name"
	rxErrGroupNameInvalid        = "invalid capture group character"
	rxErrGroupNameUnexpectedEOF  = "unclosed capture group name"
	rxErrGroupUnclosed           = "unclosed group"
	rxErrGroupUnopened           = "unopened group"
	rxErrNestLimitExceeded       = "exceed the maximum number of nested parentheses/brackets (250)"
	rxErrRepetitionCountInvalid  = "invalid repetition count range, the start must be <= the end"
	rxErrRepetitionDecimalEmpty  = "repetition quantifier expects a valid decimal"
	rxErrRepetitionCountUnclosed = "unclosed counted repetition"
	rxErrRepetitionMissing       = "repetition operator missing expression"
	rxErrUnicodeClassInvalid     = "invalid Unicode character class"
	rxErrBackreference           = "backreferences are not supported"
	rxErrLookAround              = "look-around, including look-ahead and look-behind, is not supported"
	rxErrUnicodeNotAllowed       = "Unicode not allowed here"
	rxErrPropertyNotFound        = "Unicode property not found"
	rxErrPropertyValueNotFound   = "Unicode property value not found"
	rxErrEmptyClass              = "empty character classes are not allowed"
)

// rxNestLimit is ripgrep's nesting limit (grep-regex's default).
const rxNestLimit = 250

type rxAstKind uint8

const (
	astEmpty rxAstKind = iota
	astFlags
	astLiteral
	astDot
	astAssertion
	astClassUnicode
	astClassPerl
	astClassBracketed
	astRepetition
	astGroup
	astAlternation
	astConcat
)

// Assertion kinds.
const (
	assertStartLine = iota
	assertEndLine
	assertStartText
	assertEndText
	assertWordBoundary
	assertNotWordBoundary
)

// Repetition kinds.
const (
	repZeroOrOne = iota
	repZeroOrMore
	repOneOrMore
	repExactly
	repAtLeast
	repBounded
)

// rxAst is a node of a parsed pattern; which fields count depends on kind.
type rxAst struct {
	kind rxAstKind
	span rxSpan

	c     rune // literal
	hexX  bool // literal written \xNN or \x{…}: a byte when Unicode is off
	punct bool // literal written as an escaped meta character

	assert int // assertion kind

	negated bool           // Perl and Unicode classes
	perl    byte           // 'd', 's' or 'w'
	uni     rxUnicodeClass // Unicode class
	bracket *rxBracketed   // bracketed class
	rep     int            // repetition kind
	min     uint32         // repetition counts
	max     uint32
	greedy  bool
	capture bool     // group: capturing
	flags   *rxFlags // flag group, or flags of a non-capturing group
	subs    []*rxAst // group and repetition: one; alternation and concat: all
	opSpan  rxSpan   // repetition: the operator
}

// rxUnicodeClass is \pX, \p{Name} or \p{name=value} (also ":" and "!=").
type rxUnicodeClass struct {
	oneLetter rune
	named     bool
	name      string
	value     string
	byValue   bool
}

type rxFlagItem struct {
	span rxSpan
	neg  bool
	flag rune
}

type rxFlags struct {
	span  rxSpan
	items []rxFlagItem
}

// flagState is the state a flags group gives flag f: 1 on, -1 off, 0 not mentioned.
func (f *rxFlags) flagState(flag rune) int {
	on := 1
	for _, it := range f.items {
		if it.neg {
			on = -1
		} else if it.flag == flag {
			return on
		}
	}
	return 0
}

// add appends item unless one of its kind is there; then it returns that index.
func (f *rxFlags) Add(item rxFlagItem) int {
	for i, x := range f.items {
		if x.neg == item.neg && x.flag == item.flag {
			return i
		}
	}
	f.items = append(f.items, item)
	return -1
}

type rxBracketed struct {
	span    rxSpan
	negated bool
	set     *rxClassSet
}

// rxClassSet is a class set: an item, or a binary operation (&&, --, ~~) of two sets.
type rxClassSet struct {
	op       byte // '&', '-', '~'; 0 for an item
	lhs, rhs *rxClassSet
	span     rxSpan
	item     *rxClassItem
}

func (s *rxClassSet) setSpan() rxSpan {
	if s.op == 0 {
		return s.item.span
	}
	return s.span
}

type rxItemKind uint8

const (
	itemEmpty rxItemKind = iota
	itemLiteral
	itemRange
	itemASCII
	itemUnicode
	itemPerl
	itemBracketed
	itemUnion
)

type rxClassItem struct {
	kind       rxItemKind
	span       rxSpan
	lit        *rxAst // literal; Unicode or Perl class
	start, end *rxAst // range
	ascii      string // ASCII class name
	negated    bool   // ASCII class
	bracket    *rxBracketed
	items      []*rxClassItem
}

// rxUnion is a class union under construction.
type rxUnion struct {
	span  rxSpan
	items []*rxClassItem
}

func (u *rxUnion) push(it *rxClassItem) {
	if len(u.items) == 0 {
		u.span.start = it.span.start
	}
	u.span.end = it.span.end
	u.items = append(u.items, it)
}

func (u *rxUnion) intoItem() *rxClassItem {
	switch len(u.items) {
	case 0:
		return &rxClassItem{kind: itemEmpty, span: u.span}
	case 1:
		return u.items[0]
	}
	return &rxClassItem{kind: itemUnion, span: u.span, items: u.items}
}

type rxConcat struct {
	span rxSpan
	asts []*rxAst
}

func (c *rxConcat) intoAst() *rxAst {
	switch len(c.asts) {
	case 0:
		return &rxAst{kind: astEmpty, span: c.span}
	case 1:
		return c.asts[0]
	}
	return &rxAst{kind: astConcat, span: c.span, subs: c.asts}
}

type rxGroupState struct {
	alternation bool
	// group
	concat   *rxConcat
	group    *rxAst
	ignoreWS bool
	// alternation
	alt *rxAst
}

type rxClassState struct {
	op bool
	// open
	union *rxUnion
	set   *rxBracketed
	// op
	kind byte
	lhs  *rxClassSet
}

type rxCaptureName struct {
	name string
	span rxSpan
}

type rxParser struct {
	pat          string
	pos          rxPos
	ignoreWS     bool
	captures     []rxCaptureName // sorted by name
	stackGroup   []rxGroupState
	stackClass   []rxClassState
	captureIndex uint32
}

// parseRustRegex parses pattern with ripgrep's syntax.
func parseRustRegex(pattern string) (*rxAst, *rxError) {
	p := &rxParser{pat: pattern, pos: rxPos{0, 1, 1}}
	return p.parse()
}

func (p *rxParser) err(span rxSpan, msg string) *rxError {
	return &rxError{pattern: p.pat, msg: msg, span: span}
}

func (p *rxParser) eof() bool { return p.pos.off == len(p.pat) }

func (p *rxParser) char() rune {
	r, _ := utf8.DecodeRuneInString(p.pat[p.pos.off:])
	return r
}

func (p *rxParser) charLen() int {
	_, n := utf8.DecodeRuneInString(p.pat[p.pos.off:])
	return n
}

func (p *rxParser) bump() bool {
	if p.eof() {
		return false
	}
	if p.char() == '\n' {
		p.pos.line++
		p.pos.col = 1
	} else {
		p.pos.col++
	}
	p.pos.off += p.charLen()
	return !p.eof()
}

func (p *rxParser) hasPrefix(s string) bool {
	return len(p.pat)-p.pos.off >= len(s) && p.pat[p.pos.off:p.pos.off+len(s)] == s
}

func (p *rxParser) bumpIf(prefix string) bool {
	if !p.hasPrefix(prefix) {
		return false
	}
	for range utf8.RuneCountInString(prefix) {
		p.bump()
	}
	return true
}

func (p *rxParser) bumpAndBumpSpace() bool {
	if !p.bump() {
		return false
	}
	p.bumpSpace()
	return !p.eof()
}

func (p *rxParser) bumpSpace() {
	if !p.ignoreWS {
		return
	}
	for !p.eof() {
		c := p.char()
		if unicode.IsSpace(c) {
			p.bump()
		} else if c == '#' {
			p.bump()
			for !p.eof() {
				c := p.char()
				p.bump()
				if c == '\n' {
					break
				}
			}
		} else {
			break
		}
	}
}

func (p *rxParser) peek() (rune, bool) {
	if p.eof() {
		return 0, false
	}
	rest := p.pat[p.pos.off+p.charLen():]
	if rest == "" {
		return 0, false
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return r, true
}

func (p *rxParser) peekSpace() (rune, bool) {
	if !p.ignoreWS {
		return p.peek()
	}
	if p.eof() {
		return 0, false
	}
	start := p.pos.off + p.charLen()
	inComment := false
	rest := p.pat[start:]
	i := 0
	for i < len(rest) {
		c, n := utf8.DecodeRuneInString(rest[i:])
		if unicode.IsSpace(c) {
		} else if !inComment && c == '#' {
			inComment = true
		} else if inComment && c == '\n' {
			inComment = false
		} else {
			break
		}
		i += n
	}
	if i >= len(rest) {
		return 0, false
	}
	r, _ := utf8.DecodeRuneInString(rest[i:])
	return r, true
}

func (p *rxParser) span() rxSpan { return rxSpan{p.pos, p.pos} }

func (p *rxParser) spanChar() rxSpan {
	next := rxPos{p.pos.off + p.charLen(), p.pos.line, p.pos.col + 1}
	if p.char() == '\n' {
		next.line++
		next.col = 1
	}
	return rxSpan{p.pos, next}
}

func (p *rxParser) parse() (*rxAst, *rxError) {
	concat := &rxConcat{span: p.span()}
	var e *rxError
	for {
		p.bumpSpace()
		if p.eof() {
			break
		}
		switch p.char() {
		case '(':
			concat, e = p.pushGroup(concat)
		case ')':
			concat, e = p.popGroup(concat)
		case '|':
			concat = p.pushAlternate(concat)
		case '[':
			var cls *rxAst
			if cls, e = p.parseSetClass(); e == nil {
				concat.asts = append(concat.asts, cls)
			}
		case '?':
			e = p.parseUncountedRepetition(concat, repZeroOrOne)
		case '*':
			e = p.parseUncountedRepetition(concat, repZeroOrMore)
		case '+':
			e = p.parseUncountedRepetition(concat, repOneOrMore)
		case '{':
			e = p.parseCountedRepetition(concat)
		default:
			var prim *rxAst
			if prim, e = p.parsePrimitive(); e == nil {
				concat.asts = append(concat.asts, prim)
			}
		}
		if e != nil {
			return nil, e
		}
	}
	ast, e := p.popGroupEnd(concat)
	if e != nil {
		return nil, e
	}
	if e := p.checkNest(ast); e != nil {
		return nil, e
	}
	return ast, nil
}

func (p *rxParser) pushAlternate(concat *rxConcat) *rxConcat {
	concat.span.end = p.pos
	p.pushOrAddAlternation(concat)
	p.bump()
	return &rxConcat{span: p.span()}
}

func (p *rxParser) pushOrAddAlternation(concat *rxConcat) {
	if n := len(p.stackGroup); n > 0 && p.stackGroup[n-1].alternation {
		alt := p.stackGroup[n-1].alt
		alt.subs = append(alt.subs, concat.intoAst())
		return
	}
	p.stackGroup = append(p.stackGroup, rxGroupState{alternation: true, alt: &rxAst{
		kind: astAlternation,
		span: rxSpan{concat.span.start, p.pos},
		subs: []*rxAst{concat.intoAst()},
	}})
}

func (p *rxParser) pushGroup(concat *rxConcat) (*rxConcat, *rxError) {
	g, e := p.parseGroup()
	if e != nil {
		return nil, e
	}
	if g.kind == astFlags {
		if v := g.flags.flagState('x'); v != 0 {
			p.ignoreWS = v > 0
		}
		concat.asts = append(concat.asts, g)
		return concat, nil
	}
	old := p.ignoreWS
	next := old
	if g.flags != nil {
		if v := g.flags.flagState('x'); v != 0 {
			next = v > 0
		}
	}
	p.stackGroup = append(p.stackGroup, rxGroupState{concat: concat, group: g, ignoreWS: old})
	p.ignoreWS = next
	return &rxConcat{span: p.span()}, nil
}

func (p *rxParser) popGroup(groupConcat *rxConcat) (*rxConcat, *rxError) {
	var st rxGroupState
	var alt *rxAst
	n := len(p.stackGroup)
	if n == 0 {
		return nil, p.err(p.spanChar(), rxErrGroupUnopened)
	}
	st = p.stackGroup[n-1]
	p.stackGroup = p.stackGroup[:n-1]
	if st.alternation {
		alt = st.alt
		n--
		if n == 0 || p.stackGroup[n-1].alternation {
			return nil, p.err(p.spanChar(), rxErrGroupUnopened)
		}
		st = p.stackGroup[n-1]
		p.stackGroup = p.stackGroup[:n-1]
	}
	p.ignoreWS = st.ignoreWS
	groupConcat.span.end = p.pos
	p.bump()
	group := st.group
	group.span.end = p.pos
	if alt != nil {
		alt.span.end = groupConcat.span.end
		alt.subs = append(alt.subs, groupConcat.intoAst())
		group.subs = []*rxAst{alt}
	} else {
		group.subs = []*rxAst{groupConcat.intoAst()}
	}
	st.concat.asts = append(st.concat.asts, group)
	return st.concat, nil
}

func (p *rxParser) popGroupEnd(concat *rxConcat) (*rxAst, *rxError) {
	concat.span.end = p.pos
	n := len(p.stackGroup)
	var ast *rxAst
	if n == 0 {
		ast = concat.intoAst()
	} else {
		st := p.stackGroup[n-1]
		p.stackGroup = p.stackGroup[:n-1]
		if !st.alternation {
			return nil, p.err(st.group.span, rxErrGroupUnclosed)
		}
		st.alt.span.end = p.pos
		st.alt.subs = append(st.alt.subs, concat.intoAst())
		ast = st.alt
	}
	if n := len(p.stackGroup); n > 0 {
		return nil, p.err(p.stackGroup[n-1].group.span, rxErrGroupUnclosed)
	}
	return ast, nil
}

func (p *rxParser) parseUncountedRepetition(concat *rxConcat, kind int) *rxError {
	opStart := p.pos
	n := len(concat.asts)
	if n == 0 || concat.asts[n-1].kind == astEmpty || concat.asts[n-1].kind == astFlags {
		return p.err(p.span(), rxErrRepetitionMissing)
	}
	ast := concat.asts[n-1]
	greedy := true
	if p.bump() && p.char() == '?' {
		greedy = false
		p.bump()
	}
	concat.asts[n-1] = &rxAst{
		kind:   astRepetition,
		span:   rxSpan{ast.span.start, p.pos},
		opSpan: rxSpan{opStart, p.pos},
		rep:    kind,
		greedy: greedy,
		subs:   []*rxAst{ast},
	}
	return nil
}

func (p *rxParser) parseCountedRepetition(concat *rxConcat) *rxError {
	start := p.pos
	n := len(concat.asts)
	if n == 0 || concat.asts[n-1].kind == astEmpty || concat.asts[n-1].kind == astFlags {
		return p.err(p.span(), rxErrRepetitionMissing)
	}
	ast := concat.asts[n-1]
	unclosed := func() *rxError { return p.err(rxSpan{start, p.pos}, rxErrRepetitionCountUnclosed) }
	if !p.bumpAndBumpSpace() {
		return unclosed()
	}
	decimal := func() (uint32, *rxError) {
		v, e := p.parseDecimal()
		if e != nil && e.msg == rxErrDecimalEmpty {
			e.msg = rxErrRepetitionDecimalEmpty
		}
		return v, e
	}
	lo, e := decimal()
	if e != nil {
		return e
	}
	kind, hi := repExactly, lo
	if p.eof() {
		return unclosed()
	}
	if p.char() == ',' {
		if !p.bumpAndBumpSpace() {
			return unclosed()
		}
		if p.char() != '}' {
			if hi, e = decimal(); e != nil {
				return e
			}
			kind = repBounded
		} else {
			kind = repAtLeast
		}
	}
	if p.eof() || p.char() != '}' {
		return unclosed()
	}
	greedy := true
	if p.bumpAndBumpSpace() && p.char() == '?' {
		greedy = false
		p.bump()
	}
	opSpan := rxSpan{start, p.pos}
	if kind == repBounded && lo > hi {
		return p.err(opSpan, rxErrRepetitionCountInvalid)
	}
	concat.asts[n-1] = &rxAst{
		kind:   astRepetition,
		span:   rxSpan{ast.span.start, p.pos},
		opSpan: opSpan,
		rep:    kind,
		min:    lo,
		max:    hi,
		greedy: greedy,
		subs:   []*rxAst{ast},
	}
	return nil
}

func (p *rxParser) parseGroup() (*rxAst, *rxError) {
	open := p.spanChar()
	p.bump()
	p.bumpSpace()
	if p.bumpIf("?=") || p.bumpIf("?!") || p.bumpIf("?<=") || p.bumpIf("?<!") {
		return nil, p.err(rxSpan{open.start, p.pos}, rxErrLookAround)
	}
	inner := p.span()
	if p.bumpIf("?P<") {
		p.captureIndex++
		if e := p.parseCaptureName(); e != nil {
			return nil, e
		}
		return &rxAst{kind: astGroup, span: open, capture: true}, nil
	}
	if p.bumpIf("?") {
		if p.eof() {
			return nil, p.err(open, rxErrGroupUnclosed)
		}
		flags, e := p.parseFlags()
		if e != nil {
			return nil, e
		}
		end := p.char()
		p.bump()
		if end == ')' {
			if len(flags.items) == 0 {
				return nil, p.err(inner, rxErrRepetitionMissing)
			}
			return &rxAst{kind: astFlags, span: rxSpan{open.start, p.pos}, flags: flags}, nil
		}
		return &rxAst{kind: astGroup, span: open, flags: flags}, nil
	}
	p.captureIndex++
	return &rxAst{kind: astGroup, span: open, capture: true}, nil
}

func isCaptureChar(c rune, first bool) bool {
	return c == '_' || (!first && ('0' <= c && c <= '9' || c == '.' || c == '[' || c == ']')) ||
		'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
}

func (p *rxParser) parseCaptureName() *rxError {
	if p.eof() {
		return p.err(p.span(), rxErrGroupNameUnexpectedEOF)
	}
	start := p.pos
	for p.char() != '>' {
		if !isCaptureChar(p.char(), p.pos == start) {
			return p.err(p.spanChar(), rxErrGroupNameInvalid)
		}
		if !p.bump() {
			break
		}
	}
	end := p.pos
	if p.eof() {
		return p.err(p.span(), rxErrGroupNameUnexpectedEOF)
	}
	p.bump()
	name := p.pat[start.off:end.off]
	if name == "" {
		return p.err(rxSpan{start, start}, rxErrGroupNameEmpty)
	}
	cap := rxCaptureName{name: name, span: rxSpan{start, end}}
	lo, hi := 0, len(p.captures)
	for lo < hi {
		m := (lo + hi) / 2
		if p.captures[m].name < name {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(p.captures) && p.captures[lo].name == name {
		e := p.err(cap.span, rxErrGroupNameDuplicate)
		orig := p.captures[lo].span
		e.aux = &orig
		return e
	}
	p.captures = append(p.captures, rxCaptureName{})
	copy(p.captures[lo+1:], p.captures[lo:])
	p.captures[lo] = cap
	return nil
}

func (p *rxParser) parseFlags() (*rxFlags, *rxError) {
	flags := &rxFlags{span: p.span()}
	var lastNeg *rxSpan
	for p.char() != ':' && p.char() != ')' {
		if p.char() == '-' {
			sc := p.spanChar()
			lastNeg = &sc
			if i := flags.Add(rxFlagItem{span: sc, neg: true}); i >= 0 {
				e := p.err(sc, rxErrFlagRepeatedNegation)
				orig := flags.items[i].span
				e.aux = &orig
				return nil, e
			}
		} else {
			lastNeg = nil
			switch c := p.char(); c {
			case 'i', 'm', 's', 'U', 'u', 'x':
				sc := p.spanChar()
				if i := flags.Add(rxFlagItem{span: sc, flag: c}); i >= 0 {
					e := p.err(sc, rxErrFlagDuplicate)
					orig := flags.items[i].span
					e.aux = &orig
					return nil, e
				}
			default:
				return nil, p.err(p.spanChar(), rxErrFlagUnrecognized)
			}
		}
		if !p.bump() {
			return nil, p.err(p.span(), rxErrFlagUnexpectedEOF)
		}
	}
	if lastNeg != nil {
		return nil, p.err(*lastNeg, rxErrFlagDanglingNegation)
	}
	flags.span.end = p.pos
	return flags, nil
}

func (p *rxParser) parsePrimitive() (*rxAst, *rxError) {
	switch c := p.char(); c {
	case '\\':
		return p.parseEscape()
	case '.':
		a := &rxAst{kind: astDot, span: p.spanChar()}
		p.bump()
		return a, nil
	case '^', '$':
		k := assertStartLine
		if c == '$' {
			k = assertEndLine
		}
		a := &rxAst{kind: astAssertion, span: p.spanChar(), assert: k}
		p.bump()
		return a, nil
	default:
		a := &rxAst{kind: astLiteral, span: p.spanChar(), c: c}
		p.bump()
		return a, nil
	}
}

// rxIsMeta reports the characters regex-syntax lets one escape as themselves.
func rxIsMeta(c rune) bool {
	switch c {
	case '\\', '.', '+', '*', '?', '(', ')', '|', '[', ']', '{', '}', '^', '$', '#', '&', '-', '~':
		return true
	}
	return false
}

func (p *rxParser) parseEscape() (*rxAst, *rxError) {
	start := p.pos
	if !p.bump() {
		return nil, p.err(rxSpan{start, p.pos}, rxErrEscapeUnexpectedEOF)
	}
	c := p.char()
	switch {
	case '0' <= c && c <= '9':
		// ripgrep disables octal escapes, so \0 to \9 all read as backreferences.
		return nil, p.err(rxSpan{start, p.spanChar().end}, rxErrBackreference)
	case c == 'x' || c == 'u' || c == 'U':
		lit, e := p.parseHex()
		if e != nil {
			return nil, e
		}
		lit.span.start = start
		return lit, nil
	case c == 'p' || c == 'P':
		cls, e := p.parseUnicodeClass()
		if e != nil {
			return nil, e
		}
		cls.span.start = start
		return cls, nil
	case c == 'd' || c == 's' || c == 'w' || c == 'D' || c == 'S' || c == 'W':
		p.bump()
		return &rxAst{kind: astClassPerl, span: rxSpan{start, p.pos}, perl: byte(unicode.ToLower(c)), negated: unicode.IsUpper(c)}, nil
	}
	p.bump()
	span := rxSpan{start, p.pos}
	if rxIsMeta(c) {
		return &rxAst{kind: astLiteral, span: span, c: c, punct: true}, nil
	}
	if r := rxSpecialEscape(c); r >= 0 {
		return &rxAst{kind: astLiteral, span: span, c: r}, nil
	}
	if c == ' ' && p.ignoreWS {
		return &rxAst{kind: astLiteral, span: span, c: ' '}, nil
	}
	switch c {
	case 'A':
		return &rxAst{kind: astAssertion, span: span, assert: assertStartText}, nil
	case 'z':
		return &rxAst{kind: astAssertion, span: span, assert: assertEndText}, nil
	case 'b':
		return &rxAst{kind: astAssertion, span: span, assert: assertWordBoundary}, nil
	case 'B':
		return &rxAst{kind: astAssertion, span: span, assert: assertNotWordBoundary}, nil
	}
	return nil, p.err(span, rxErrEscapeUnrecognized)
}

// rxSpecialEscape is the character \c stands for among \a \f \t \n \r \v, or -1.
func rxSpecialEscape(c rune) rune {
	switch c {
	case 'a':
		return '\a'
	case 'f':
		return '\f'
	case 't':
		return '\t'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 'v':
		return '\v'
	}
	return -1
}

func isHexDigit(c rune) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func (p *rxParser) parseHex() (*rxAst, *rxError) {
	digits := 8
	switch p.char() {
	case 'x':
		digits = 2
	case 'u':
		digits = 4
	}
	isX := digits == 2
	if !p.bumpAndBumpSpace() {
		return nil, p.err(p.span(), rxErrEscapeUnexpectedEOF)
	}
	if p.char() == '{' {
		return p.parseHexBrace(isX)
	}
	return p.parseHexDigits(digits, isX)
}

func (p *rxParser) parseHexDigits(digits int, isX bool) (*rxAst, *rxError) {
	start := p.pos
	var hex []rune
	for i := 0; i < digits; i++ {
		if i > 0 && !p.bumpAndBumpSpace() {
			return nil, p.err(p.span(), rxErrEscapeUnexpectedEOF)
		}
		if !isHexDigit(p.char()) {
			return nil, p.err(p.spanChar(), rxErrEscapeHexInvalidDigit)
		}
		hex = append(hex, p.char())
	}
	p.bumpAndBumpSpace()
	end := p.pos
	c, ok := hexScalar(string(hex))
	if !ok {
		return nil, p.err(rxSpan{start, end}, rxErrEscapeHexInvalid)
	}
	return &rxAst{kind: astLiteral, span: rxSpan{start, end}, c: c, hexX: isX}, nil
}

func hexScalar(hex string) (rune, bool) {
	v, err := strconv.ParseUint(hex, 16, 32)
	if err != nil || v > unicode.MaxRune || (v >= 0xD800 && v <= 0xDFFF) {
		return 0, false
	}
	return rune(v), true
}

func (p *rxParser) parseHexBrace(isX bool) (*rxAst, *rxError) {
	bracePos := p.pos
	start := p.spanChar().end
	var hex []rune
	for p.bumpAndBumpSpace() && p.char() != '}' {
		if !isHexDigit(p.char()) {
			return nil, p.err(p.spanChar(), rxErrEscapeHexInvalidDigit)
		}
		hex = append(hex, p.char())
	}
	if p.eof() {
		return nil, p.err(rxSpan{bracePos, p.pos}, rxErrEscapeUnexpectedEOF)
	}
	end := p.pos
	p.bumpAndBumpSpace()
	if len(hex) == 0 {
		return nil, p.err(rxSpan{bracePos, p.pos}, rxErrEscapeHexEmpty)
	}
	c, ok := hexScalar(string(hex))
	if !ok {
		return nil, p.err(rxSpan{start, end}, rxErrEscapeHexInvalid)
	}
	// A braced \x names a byte only with the fixed form (regex-syntax's Literal::byte).
	_ = isX
	return &rxAst{kind: astLiteral, span: rxSpan{start, p.pos}, c: c}, nil
}

func (p *rxParser) parseDecimal() (uint32, *rxError) {
	for !p.eof() && unicode.IsSpace(p.char()) {
		p.bump()
	}
	start := p.pos
	var digits []byte
	for !p.eof() && '0' <= p.char() && p.char() <= '9' {
		digits = append(digits, byte(p.char()))
		p.bumpAndBumpSpace()
	}
	span := rxSpan{start, p.pos}
	for !p.eof() && unicode.IsSpace(p.char()) {
		p.bumpAndBumpSpace()
	}
	if len(digits) == 0 {
		return 0, p.err(span, rxErrDecimalEmpty)
	}
	v, err := strconv.ParseUint(string(digits), 10, 32)
	if err != nil {
		return 0, p.err(span, rxErrDecimalInvalid)
	}
	return uint32(v), nil
}

func (p *rxParser) unclosedClassError() *rxError {
	for i := len(p.stackClass) - 1; i >= 0; i-- {
		if !p.stackClass[i].op {
			return p.err(p.stackClass[i].set.span, rxErrClassUnclosed)
		}
	}
	panic("no open character class")
}

func (p *rxParser) parseSetClass() (*rxAst, *rxError) {
	union := &rxUnion{span: p.span()}
	for {
		p.bumpSpace()
		if p.eof() {
			return nil, p.unclosedClassError()
		}
		switch c := p.char(); {
		case c == '[':
			if len(p.stackClass) > 0 {
				if it := p.maybeParseASCIIClass(); it != nil {
					union.push(it)
					continue
				}
			}
			set, nested, e := p.parseSetClassOpen()
			if e != nil {
				return nil, e
			}
			p.stackClass = append(p.stackClass, rxClassState{union: union, set: set})
			union = nested
		case c == ']':
			item := &rxClassSet{item: union.intoItem()}
			prev := p.popClassOp(item)
			n := len(p.stackClass)
			st := p.stackClass[n-1]
			p.stackClass = p.stackClass[:n-1]
			p.bump()
			st.set.span.end = p.pos
			st.set.set = prev
			if len(p.stackClass) == 0 {
				return &rxAst{kind: astClassBracketed, span: st.set.span, bracket: st.set}, nil
			}
			st.union.push(&rxClassItem{kind: itemBracketed, span: st.set.span, bracket: st.set})
			union = st.union
		case c == '&' && p.peekIs('&'):
			p.bumpIf("&&")
			union = p.pushClassOp('&', union)
		case c == '-' && p.peekIs('-'):
			p.bumpIf("--")
			union = p.pushClassOp('-', union)
		case c == '~' && p.peekIs('~'):
			p.bumpIf("~~")
			union = p.pushClassOp('~', union)
		default:
			it, e := p.parseSetClassRange()
			if e != nil {
				return nil, e
			}
			union.push(it)
		}
	}
}

func (p *rxParser) peekIs(c rune) bool {
	r, ok := p.peek()
	return ok && r == c
}

func (p *rxParser) pushClassOp(kind byte, union *rxUnion) *rxUnion {
	lhs := p.popClassOp(&rxClassSet{item: union.intoItem()})
	p.stackClass = append(p.stackClass, rxClassState{op: true, kind: kind, lhs: lhs})
	return &rxUnion{span: p.span()}
}

func (p *rxParser) popClassOp(rhs *rxClassSet) *rxClassSet {
	n := len(p.stackClass)
	if n == 0 || !p.stackClass[n-1].op {
		return rhs
	}
	st := p.stackClass[n-1]
	p.stackClass = p.stackClass[:n-1]
	return &rxClassSet{op: st.kind, lhs: st.lhs, rhs: rhs, span: rxSpan{st.lhs.setSpan().start, rhs.setSpan().end}}
}

func (p *rxParser) parseSetClassRange() (*rxClassItem, *rxError) {
	prim1, e := p.parseSetClassItem()
	if e != nil {
		return nil, e
	}
	p.bumpSpace()
	if p.eof() {
		return nil, p.unclosedClassError()
	}
	next, ok := p.peekSpace()
	if p.char() != '-' || (ok && (next == ']' || next == '-')) {
		return p.intoClassSetItem(prim1)
	}
	if !p.bumpAndBumpSpace() {
		return nil, p.unclosedClassError()
	}
	prim2, e := p.parseSetClassItem()
	if e != nil {
		return nil, e
	}
	span := rxSpan{prim1.span.start, prim2.span.end}
	if prim1.kind != astLiteral {
		return nil, p.err(prim1.span, rxErrClassRangeLiteral)
	}
	if prim2.kind != astLiteral {
		return nil, p.err(prim2.span, rxErrClassRangeLiteral)
	}
	if prim1.c > prim2.c {
		return nil, p.err(span, rxErrClassRangeInvalid)
	}
	return &rxClassItem{kind: itemRange, span: span, start: prim1, end: prim2}, nil
}

func (p *rxParser) intoClassSetItem(a *rxAst) (*rxClassItem, *rxError) {
	switch a.kind {
	case astLiteral:
		return &rxClassItem{kind: itemLiteral, span: a.span, lit: a}, nil
	case astClassPerl:
		return &rxClassItem{kind: itemPerl, span: a.span, lit: a}, nil
	case astClassUnicode:
		return &rxClassItem{kind: itemUnicode, span: a.span, lit: a}, nil
	}
	return nil, p.err(a.span, rxErrClassEscapeInvalid)
}

func (p *rxParser) parseSetClassItem() (*rxAst, *rxError) {
	if p.char() == '\\' {
		return p.parseEscape()
	}
	a := &rxAst{kind: astLiteral, span: p.spanChar(), c: p.char()}
	p.bump()
	return a, nil
}

func (p *rxParser) parseSetClassOpen() (*rxBracketed, *rxUnion, *rxError) {
	start := p.pos
	if !p.bumpAndBumpSpace() {
		return nil, nil, p.err(rxSpan{start, p.pos}, rxErrClassUnclosed)
	}
	negated := false
	if p.char() == '^' {
		if !p.bumpAndBumpSpace() {
			return nil, nil, p.err(rxSpan{start, p.pos}, rxErrClassUnclosed)
		}
		negated = true
	}
	union := &rxUnion{span: p.span()}
	for p.char() == '-' {
		union.push(&rxClassItem{kind: itemLiteral, span: p.spanChar(), lit: &rxAst{kind: astLiteral, span: p.spanChar(), c: '-'}})
		if !p.bumpAndBumpSpace() {
			return nil, nil, p.err(rxSpan{start, start}, rxErrClassUnclosed)
		}
	}
	if len(union.items) == 0 && p.char() == ']' {
		union.push(&rxClassItem{kind: itemLiteral, span: p.spanChar(), lit: &rxAst{kind: astLiteral, span: p.spanChar(), c: ']'}})
		if !p.bumpAndBumpSpace() {
			return nil, nil, p.err(rxSpan{start, p.pos}, rxErrClassUnclosed)
		}
	}
	set := &rxBracketed{span: rxSpan{start, p.pos}, negated: negated}
	return set, union, nil
}

// rxASCIIClass returns the ranges of the [:name:] class, or nil for an unknown name.
func rxASCIIClass(name string) []rune {
	switch name {
	case "alnum":
		return []rune{'0', '9', 'A', 'Z', 'a', 'z'}
	case "alpha":
		return []rune{'A', 'Z', 'a', 'z'}
	case "ascii":
		return []rune{0, 0x7F}
	case "blank":
		return []rune{'\t', '\t', ' ', ' '}
	case "cntrl":
		return []rune{0, 0x1F, 0x7F, 0x7F}
	case "digit":
		return []rune{'0', '9'}
	case "graph":
		return []rune{'!', '~'}
	case "lower":
		return []rune{'a', 'z'}
	case "print":
		return []rune{' ', '~'}
	case "punct":
		return []rune{'!', '/', ':', '@', '[', '`', '{', '~'}
	case "space":
		return []rune{'\t', '\r', ' ', ' '}
	case "upper":
		return []rune{'A', 'Z'}
	case "word":
		return []rune{'0', '9', 'A', 'Z', '_', '_', 'a', 'z'}
	case "xdigit":
		return []rune{'0', '9', 'A', 'F', 'a', 'f'}
	}
	return nil
}

func (p *rxParser) maybeParseASCIIClass() *rxClassItem {
	start := p.pos
	reset := func() *rxClassItem { p.pos = start; return nil }
	if !p.bump() || p.char() != ':' {
		return reset()
	}
	if !p.bump() {
		return reset()
	}
	negated := false
	if p.char() == '^' {
		negated = true
		if !p.bump() {
			return reset()
		}
	}
	nameStart := p.pos.off
	for p.char() != ':' && p.bump() {
	}
	if p.eof() {
		return reset()
	}
	name := p.pat[nameStart:p.pos.off]
	if !p.bumpIf(":]") {
		return reset()
	}
	if rxASCIIClass(name) == nil {
		return reset()
	}
	return &rxClassItem{kind: itemASCII, span: rxSpan{start, p.pos}, ascii: name, negated: negated}
}

func (p *rxParser) parseUnicodeClass() (*rxAst, *rxError) {
	negated := p.char() == 'P'
	if !p.bumpAndBumpSpace() {
		return nil, p.err(p.span(), rxErrEscapeUnexpectedEOF)
	}
	var start rxPos
	var u rxUnicodeClass
	if p.char() == '{' {
		start = p.spanChar().end
		var name []rune
		for p.bumpAndBumpSpace() && p.char() != '}' {
			name = append(name, p.char())
		}
		if p.eof() {
			return nil, p.err(p.span(), rxErrEscapeUnexpectedEOF)
		}
		p.bump()
		s := string(name)
		u.named = true
		if i := indexOf(s, "!="); i >= 0 {
			u.byValue, u.name, u.value = true, s[:i], s[i+2:]
		} else if i := indexOf(s, ":"); i >= 0 {
			u.byValue, u.name, u.value = true, s[:i], s[i+1:]
		} else if i := indexOf(s, "="); i >= 0 {
			u.byValue, u.name, u.value = true, s[:i], s[i+1:]
		} else {
			u.name = s
		}
	} else {
		start = p.pos
		c := p.char()
		if c == '\\' {
			return nil, p.err(p.spanChar(), rxErrUnicodeClassInvalid)
		}
		p.bumpAndBumpSpace()
		u.oneLetter = c
	}
	return &rxAst{kind: astClassUnicode, span: rxSpan{start, p.pos}, negated: negated, uni: u}, nil
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// checkNest applies the nesting limit the way regex-syntax's NestLimiter does.
func (p *rxParser) checkNest(a *rxAst) *rxError {
	var visit func(a *rxAst, depth int) *rxError
	var visitSet func(s *rxClassSet, depth int) *rxError
	var visitItem func(it *rxClassItem, depth int) *rxError
	inc := func(span rxSpan, depth int) (int, *rxError) {
		if depth+1 > rxNestLimit {
			return 0, p.err(span, rxErrNestLimitExceeded)
		}
		return depth + 1, nil
	}
	visit = func(a *rxAst, depth int) *rxError {
		switch a.kind {
		case astClassBracketed, astRepetition, astGroup, astAlternation, astConcat:
			d, e := inc(a.span, depth)
			if e != nil {
				return e
			}
			if a.kind == astClassBracketed {
				return visitSet(a.bracket.set, d)
			}
			for _, s := range a.subs {
				if e := visit(s, d); e != nil {
					return e
				}
			}
		}
		return nil
	}
	visitSet = func(s *rxClassSet, depth int) *rxError {
		if s.op == 0 {
			return visitItem(s.item, depth)
		}
		d, e := inc(s.span, depth)
		if e != nil {
			return e
		}
		if e := visitSet(s.lhs, d); e != nil {
			return e
		}
		return visitSet(s.rhs, d)
	}
	visitItem = func(it *rxClassItem, depth int) *rxError {
		switch it.kind {
		case itemBracketed:
			d, e := inc(it.span, depth)
			if e != nil {
				return e
			}
			return visitSet(it.bracket.set, d)
		case itemUnion:
			d, e := inc(it.span, depth)
			if e != nil {
				return e
			}
			for _, x := range it.items {
				if e := visitItem(x, d); e != nil {
					return e
				}
			}
		}
		return nil
	}
	return visit(a, 0)
}
