package rxsyntax

import (
	"encoding/binary"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file turns a parsed ripgrep pattern into Go regexp syntax with the same meaning
// for line matching, raising the errors regex-syntax's translator and ripgrep raise
// after parsing (unknown Unicode classes, empty classes, Unicode where it is switched
// off, a newline that could be matched).

// Range is an inclusive range of code points (or bytes, in a byte class).
type Range struct{ Lo, Hi rune }

// Class is a set of code points as sorted, non-overlapping, non-adjacent ranges;
// bytes says it is a class of bytes (Unicode mode off), whose universe is 0–0xFF.
type Class struct {
	Ranges []Range
	Bytes  bool
}

func (c *Class) max() rune {
	if c.Bytes {
		return 0xFF
	}
	return unicode.MaxRune
}

func (c *Class) Add(lo, hi rune) { c.Ranges = append(c.Ranges, Range{lo, hi}) }

// canon sorts and merges the ranges.
func (c *Class) Canon() {
	sort.Slice(c.Ranges, func(i, j int) bool { return c.Ranges[i].Lo < c.Ranges[j].Lo })
	out := c.Ranges[:0]
	for _, x := range c.Ranges {
		if n := len(out); n > 0 && x.Lo <= out[n-1].Hi+1 {
			if x.Hi > out[n-1].Hi {
				out[n-1].Hi = x.Hi
			}
			continue
		}
		out = append(out, x)
	}
	c.Ranges = out
}

func (c *Class) union(o *Class) {
	c.Ranges = append(c.Ranges, o.Ranges...)
	c.Canon()
}

func (c *Class) negate() {
	c.Canon()
	var out []Range
	next := rune(0)
	for _, x := range c.Ranges {
		if x.Lo > next {
			out = append(out, Range{next, x.Lo - 1})
		}
		next = x.Hi + 1
	}
	if next <= c.max() {
		out = append(out, Range{next, c.max()})
	}
	c.Ranges = out
}

func (c *Class) intersect(o *Class) {
	c.Canon()
	o.Canon()
	var out []Range
	i, j := 0, 0
	for i < len(c.Ranges) && j < len(o.Ranges) {
		lo, hi := max(c.Ranges[i].Lo, o.Ranges[j].Lo), min(c.Ranges[i].Hi, o.Ranges[j].Hi)
		if lo <= hi {
			out = append(out, Range{lo, hi})
		}
		if c.Ranges[i].Hi < o.Ranges[j].Hi {
			i++
		} else {
			j++
		}
	}
	c.Ranges = out
}

func (c *Class) difference(o *Class) {
	n := &Class{Ranges: append([]Range(nil), o.Ranges...), Bytes: c.Bytes}
	n.negate()
	c.intersect(n)
}

func (c *Class) symmetricDifference(o *Class) {
	a := &Class{Ranges: append([]Range(nil), c.Ranges...), Bytes: c.Bytes}
	a.intersect(&Class{Ranges: append([]Range(nil), o.Ranges...)})
	c.union(o)
	c.difference(a)
}

// FoldCase adds the simple case folds of every member (regex-syntax's
// case_fold_simple); in a byte class only ASCII letters fold.
func (c *Class) FoldCase() {
	c.Canon()
	var extra []Range
	for _, x := range c.Ranges {
		if c.Bytes {
			lo, hi := max(x.Lo, 'A'), min(x.Hi, 'Z')
			if lo <= hi {
				extra = append(extra, Range{lo + 32, hi + 32})
			}
			lo, hi = max(x.Lo, 'a'), min(x.Hi, 'z')
			if lo <= hi {
				extra = append(extra, Range{lo - 32, hi - 32})
			}
			continue
		}
		for _, cr := range unicode.CaseRanges {
			lo, hi := max(x.Lo, rune(cr.Lo)), min(x.Hi, rune(cr.Hi))
			for r := lo; r <= hi; r++ {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					extra = append(extra, Range{f, f})
				}
			}
		}
	}
	c.Ranges = append(c.Ranges, extra...)
	c.Canon()
}

// HasCaseMapping reports whether r folds to anything but itself.
func HasCaseMapping(r rune) bool { return unicode.SimpleFold(r) != r }

// rxDecodeTable unpacks a table from tables.go.
func rxDecodeTable(packed string) *Class {
	c := &Class{}
	b := []byte(packed)
	prev := rune(0)
	for len(b) > 0 {
		gap, n := binary.Uvarint(b)
		b = b[n:]
		length, m := binary.Uvarint(b)
		b = b[m:]
		lo := prev + rune(gap)
		c.Ranges = append(c.Ranges, Range{lo, lo + rune(length)})
		prev = lo + rune(length)
	}
	return c
}

func rxNamedTable(name string) *Class {
	packed := rxTable(name)
	if packed == "" {
		return nil
	}
	return rxDecodeTable(packed)
}

// rxNormalizeName is regex-syntax's symbolic_name_normalize: case, spaces, '_' and '-'
// do not count, nor a leading "is" (except in "isc"), nor non-ASCII bytes.
func rxNormalizeName(x string) string {
	b := []byte(x)
	start := 0
	startsWithIs := len(b) >= 2 && (b[0] == 'i' || b[0] == 'I') && (b[1] == 's' || b[1] == 'S')
	if startsWithIs {
		start = 2
	}
	var out []byte
	for _, c := range b[start:] {
		switch {
		case c == ' ' || c == '_' || c == '-':
		case 'A' <= c && c <= 'Z':
			out = append(out, c+'a'-'A')
		case c <= 0x7F:
			out = append(out, c)
		}
	}
	if startsWithIs && len(out) == 1 && out[0] == 'c' {
		return "isc"
	}
	return string(out)
}

// rxAgeList is the Unicode versions in order: \p{Age=V} is every version up to V.
const rxAgeList = "V1_1 V2_0 V2_1 V3_0 V3_1 V3_2 V4_0 V4_1 V5_0 V5_1 V5_2 V6_0 V6_1 V6_2 V6_3 V7_0 V8_0 V9_0 V10_0 V11_0 V12_0 V12_1 V13_0 V14_0"

func rxCanonicalGencat(norm string) string {
	switch norm {
	case "any":
		return "Any"
	case "assigned":
		return "Assigned"
	case "ascii":
		return "ASCII"
	}
	v, _ := rxCanonicalValue("General_Category", norm)
	return v
}

func rxGencat(name string) (*Class, string) {
	switch name {
	case "ASCII":
		return &Class{Ranges: []Range{{0, 0x7F}}}, ""
	case "Any":
		return &Class{Ranges: []Range{{0, unicode.MaxRune}}}, ""
	case "Assigned":
		c, e := rxGencat("Unassigned")
		if c != nil {
			c.negate()
		}
		return c, e
	}
	if c := rxNamedTable("gc/" + name); c != nil {
		return c, ""
	}
	return nil, rxErrPropertyValueNotFound
}

// rxUnicodeSet resolves \p{…} as regex-syntax does, or names the error.
func rxUnicodeSet(u rxUnicodeClass) (*Class, string) {
	binaryQuery := func(name string) (*Class, string) {
		norm := rxNormalizeName(name)
		if norm != "cf" {
			if canon := rxCanonicalProperty(norm); canon != "" {
				switch canon {
				case "Decimal_Number":
					return rxNamedTable("gc/Decimal_Number"), ""
				}
				if c := rxNamedTable("bool/" + canon); c != nil {
					return c, ""
				}
				return nil, rxErrPropertyNotFound
			}
		}
		if canon := rxCanonicalGencat(norm); canon != "" {
			return rxGencat(canon)
		}
		if canon, _ := rxCanonicalValue("Script", norm); canon != "" {
			if c := rxNamedTable("sc/" + canon); c != nil {
				return c, ""
			}
			return nil, rxErrPropertyValueNotFound
		}
		return nil, rxErrPropertyNotFound
	}
	if !u.byValue {
		if u.named {
			return binaryQuery(u.name)
		}
		return binaryQuery(string(u.oneLetter))
	}
	prop := rxCanonicalProperty(rxNormalizeName(u.name))
	value := rxNormalizeName(u.value)
	if prop == "" {
		return nil, rxErrPropertyNotFound
	}
	switch prop {
	case "General_Category":
		canon := rxCanonicalGencat(value)
		if canon == "" {
			return nil, rxErrPropertyValueNotFound
		}
		return rxGencat(canon)
	case "Script":
		canon, _ := rxCanonicalValue("Script", value)
		if canon == "" {
			return nil, rxErrPropertyValueNotFound
		}
		if c := rxNamedTable("sc/" + canon); c != nil {
			return c, ""
		}
		return nil, rxErrPropertyValueNotFound
	}
	canon, has := rxCanonicalValue(prop, value)
	if !has || canon == "" {
		return nil, rxErrPropertyValueNotFound
	}
	prefix := map[string]string{"Script_Extensions": "scx/", "Grapheme_Cluster_Break": "gcb/", "Sentence_Break": "sb/", "Word_Break": "wb/"}
	switch prop {
	case "Age":
		c := &Class{}
		for _, a := range strings.Fields(rxAgeList) {
			if t := rxNamedTable("age/" + a); t != nil {
				c.Ranges = append(c.Ranges, t.Ranges...)
			}
			if a == canon {
				c.Canon()
				return c, ""
			}
		}
		return nil, rxErrPropertyValueNotFound
	default:
		p, ok := prefix[prop]
		if !ok {
			return nil, rxErrPropertyNotFound
		}
		if c := rxNamedTable(p + canon); c != nil {
			return c, ""
		}
		return nil, rxErrPropertyValueNotFound
	}
}

// PerlSet is \d, \s or \w with Unicode on.
func PerlSet(kind byte) *Class {
	switch kind {
	case 'd':
		return rxNamedTable("gc/Decimal_Number")
	case 's':
		return rxNamedTable("bool/White_Space")
	}
	return rxNamedTable("perl/PERL_WORD")
}

// rxPerlBytes is \d, \s or \w with Unicode off.
func rxPerlBytes(kind byte) *Class {
	name := map[byte]string{'d': "digit", 's': "space", 'w': "word"}[kind]
	return rxASCIISet(name, true)
}

func rxASCIISet(name string, bytes bool) *Class {
	c := &Class{Bytes: bytes}
	r := rxASCIIClass(name)
	for i := 0; i+1 < len(r); i += 2 {
		c.Add(r[i], r[i+1])
	}
	return c
}

// rxTransFlags are the flags in force; 0 means not set, 1 on, -1 off.
type rxTransFlags struct{ i, m, s, U, u int8 }

func (f rxTransFlags) merge(from *rxFlags) rxTransFlags {
	n := rxTransFlags{}
	on := int8(1)
	for _, it := range from.items {
		if it.neg {
			on = -1
			continue
		}
		switch it.flag {
		case 'i':
			n.i = on
		case 'm':
			n.m = on
		case 's':
			n.s = on
		case 'U':
			n.U = on
		case 'u':
			n.u = on
		}
	}
	if n.i == 0 {
		n.i = f.i
	}
	if n.m == 0 {
		n.m = f.m
	}
	if n.s == 0 {
		n.s = f.s
	}
	if n.U == 0 {
		n.U = f.U
	}
	if n.u == 0 {
		n.u = f.u
	}
	return n
}

func (f rxTransFlags) fold() bool    { return f.i > 0 }
func (f rxTransFlags) unicode() bool { return f.u >= 0 }

type Op uint8

const (
	OpEmpty Op = iota
	OpLiteral
	OpByte
	OpClass
	OpLineStart
	OpLineEnd
	OpWordBoundary
	OpNotWordBoundary
	OpRepeat
	OpConcat
	OpAlternate
)

// Hir is the translated pattern: what regex-syntax's HIR says, as far as line
// matching needs it.
type Hir struct {
	Op       Op
	Rune     rune // literal, or a byte
	Fold     bool // literal matches its case folds too
	Class    *Class
	Min, Max int // repeat; max -1 for no bound
	greedy   bool
	Unicode  bool // word boundary: Unicode-aware (Go's \b is ASCII-only)
	Subs     []*Hir
}

// HasUnicodeWordBoundary reports whether h has a Unicode-aware \b or \B, which Go's
// regexp cannot express.
func HasUnicodeWordBoundary(h *Hir) bool {
	if (h.Op == OpWordBoundary || h.Op == OpNotWordBoundary) && h.Unicode {
		return true
	}
	for _, s := range h.Subs {
		if HasUnicodeWordBoundary(s) {
			return true
		}
	}
	return false
}

type rxTranslator struct {
	pat   string
	flags rxTransFlags
}

func (t *rxTranslator) err(span rxSpan, msg string) *rxError {
	return &rxError{pattern: t.pat, msg: msg, span: span}
}

func (t *rxTranslator) trans(a *rxAst) (*Hir, *rxError) {
	switch a.kind {
	case astEmpty:
		return &Hir{Op: OpEmpty}, nil
	case astFlags:
		t.flags = t.flags.merge(a.flags)
		return &Hir{Op: OpEmpty}, nil
	case astLiteral:
		return t.literal(a)
	case astDot:
		if !t.flags.unicode() {
			return &Hir{Op: OpClass, Class: &Class{Ranges: []Range{{0, '\n' - 1}, {'\n' + 1, 0xFF}}, Bytes: true}}, nil
		}
		return &Hir{Op: OpClass, Class: &Class{Ranges: []Range{{0, '\n' - 1}, {'\n' + 1, unicode.MaxRune}}}}, nil
	case astAssertion:
		switch a.assert {
		case assertStartLine, assertStartText:
			// ripgrep matches line by line, so text anchors are line anchors.
			return &Hir{Op: OpLineStart}, nil
		case assertEndLine, assertEndText:
			return &Hir{Op: OpLineEnd}, nil
		case assertWordBoundary:
			return &Hir{Op: OpWordBoundary, Unicode: t.flags.unicode()}, nil
		}
		return &Hir{Op: OpNotWordBoundary, Unicode: t.flags.unicode()}, nil
	case astClassPerl:
		var c *Class
		if t.flags.unicode() {
			c = PerlSet(a.perl)
		} else {
			c = rxPerlBytes(a.perl)
		}
		if a.negated {
			c.negate()
		}
		return &Hir{Op: OpClass, Class: c}, nil
	case astClassUnicode:
		c, e := t.unicodeClass(a)
		if e != nil {
			return nil, e
		}
		return &Hir{Op: OpClass, Class: c}, nil
	case astClassBracketed:
		c, e := t.classSet(a.bracket.set)
		if e != nil {
			return nil, e
		}
		t.foldAndNegate(c, a.bracket.negated)
		if len(c.Ranges) == 0 {
			return nil, t.err(a.bracket.span, rxErrEmptyClass)
		}
		return &Hir{Op: OpClass, Class: c}, nil
	case astRepetition:
		sub, e := t.trans(a.subs[0])
		if e != nil {
			return nil, e
		}
		h := &Hir{Op: OpRepeat, Subs: []*Hir{sub}, greedy: a.greedy}
		if t.flags.U > 0 {
			h.greedy = !h.greedy
		}
		switch a.rep {
		case repZeroOrOne:
			h.Min, h.Max = 0, 1
		case repZeroOrMore:
			h.Min, h.Max = 0, -1
		case repOneOrMore:
			h.Min, h.Max = 1, -1
		case repExactly:
			h.Min, h.Max = int(a.min), int(a.min)
		case repAtLeast:
			h.Min, h.Max = int(a.min), -1
		case repBounded:
			h.Min, h.Max = int(a.min), int(a.max)
		}
		return h, nil
	case astGroup:
		old := t.flags
		if a.flags != nil {
			t.flags = t.flags.merge(a.flags)
		}
		sub, e := t.trans(a.subs[0])
		t.flags = old
		return sub, e
	case astConcat, astAlternation:
		h := &Hir{Op: OpConcat}
		if a.kind == astAlternation {
			h.Op = OpAlternate
		}
		for _, s := range a.subs {
			x, e := t.trans(s)
			if e != nil {
				return nil, e
			}
			if h.Op == OpConcat && x.Op == OpEmpty {
				continue
			}
			h.Subs = append(h.Subs, x)
		}
		return h, nil
	}
	panic("unknown pattern node")
}

func (t *rxTranslator) literal(a *rxAst) (*Hir, *rxError) {
	c := a.c
	if !t.flags.unicode() && a.hexX && c > 0x7F && c <= 0xFF {
		return &Hir{Op: OpByte, Rune: c}, nil
	}
	if !t.flags.unicode() && c > 0x7F {
		return nil, t.err(a.span, rxErrUnicodeNotAllowed)
	}
	if t.flags.fold() && HasCaseMapping(c) {
		if !t.flags.unicode() { // only ASCII letters fold, and only to each other
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
				cls := &Class{Bytes: true}
				cls.Add(c, c)
				cls.FoldCase()
				return &Hir{Op: OpClass, Class: cls}, nil
			}
			return &Hir{Op: OpLiteral, Rune: c}, nil
		}
		return &Hir{Op: OpLiteral, Rune: c, Fold: true}, nil
	}
	return &Hir{Op: OpLiteral, Rune: c}, nil
}

func (t *rxTranslator) unicodeClass(a *rxAst) (*Class, *rxError) {
	if !t.flags.unicode() {
		return nil, t.err(a.span, rxErrUnicodeNotAllowed)
	}
	c, msg := rxUnicodeSet(a.uni)
	if msg != "" {
		return nil, t.err(a.span, msg)
	}
	t.foldAndNegate(c, a.negated)
	if len(c.Ranges) == 0 {
		return nil, t.err(a.span, rxErrEmptyClass)
	}
	return c, nil
}

func (t *rxTranslator) foldAndNegate(c *Class, negated bool) {
	if t.flags.fold() {
		c.FoldCase()
	}
	if negated {
		c.negate()
	}
}

func (t *rxTranslator) classSet(s *rxClassSet) (*Class, *rxError) {
	if s.op == 0 {
		return t.classItem(s.item)
	}
	lhs, e := t.classSet(s.lhs)
	if e != nil {
		return nil, e
	}
	rhs, e := t.classSet(s.rhs)
	if e != nil {
		return nil, e
	}
	if t.flags.fold() {
		lhs.FoldCase()
		rhs.FoldCase()
	}
	switch s.op {
	case '&':
		lhs.intersect(rhs)
	case '-':
		lhs.difference(rhs)
	case '~':
		lhs.symmetricDifference(rhs)
	}
	return lhs, nil
}

func (t *rxTranslator) classLiteral(a *rxAst) (rune, *rxError) {
	if t.flags.unicode() {
		return a.c, nil
	}
	if a.hexX && a.c <= 0xFF {
		return a.c, nil
	}
	if a.c > 0x7F {
		return 0, t.err(a.span, rxErrUnicodeNotAllowed)
	}
	return a.c, nil
}

func (t *rxTranslator) classItem(it *rxClassItem) (*Class, *rxError) {
	c := &Class{Bytes: !t.flags.unicode()}
	switch it.kind {
	case itemEmpty:
	case itemLiteral:
		r, e := t.classLiteral(it.lit)
		if e != nil {
			return nil, e
		}
		c.Add(r, r)
	case itemRange:
		lo, e := t.classLiteral(it.start)
		if e != nil {
			return nil, e
		}
		hi, e := t.classLiteral(it.end)
		if e != nil {
			return nil, e
		}
		c.Add(lo, hi)
	case itemASCII:
		c = rxASCIISet(it.ascii, !t.flags.unicode())
		t.foldAndNegate(c, it.negated)
	case itemUnicode:
		return t.unicodeClass(it.lit)
	case itemPerl:
		var p *Class
		if t.flags.unicode() {
			p = PerlSet(it.lit.perl)
		} else {
			p = rxPerlBytes(it.lit.perl)
		}
		if it.lit.negated {
			p.negate()
		}
		return p, nil
	case itemBracketed:
		n, e := t.classSet(it.bracket.set)
		if e != nil {
			return nil, e
		}
		t.foldAndNegate(n, it.bracket.negated)
		return n, nil
	case itemUnion:
		for _, x := range it.items {
			n, e := t.classItem(x)
			if e != nil {
				return nil, e
			}
			c.Ranges = append(c.Ranges, n.Ranges...)
		}
	}
	c.Canon()
	return c, nil
}

// NewlineError is ripgrep's refusal of a pattern that could match a line terminator.
const NewlineError = "the literal '\"\\n\"' is not allowed in a regex"

// ErrorText is a pattern error as ripgrep 13 prints it: it appends a hint to any
// message that mentions a newline literal, or backreferences and look-around (even
// when only the quoted pattern does).
func ErrorText(msg string) string {
	if strings.Contains(msg, "the literal") && strings.Contains(msg, "not allowed") {
		msg += "\n\nConsider enabling multiline mode with the --multiline flag (or -U for short).\n" +
			"When multiline mode is enabled, new line characters can be matched."
	}
	if strings.Contains(msg, "backreferences") || strings.Contains(msg, "look-around") {
		msg += "\n\nConsider enabling PCRE2 with the --pcre2 flag, which can handle backreferences\nand look-around."
	}
	return msg
}

// StripNewline removes '\n' from every class, as ripgrep does for its line terminator;
// a literal newline, or a class of nothing else, is ripgrep's error.
func StripNewline(h *Hir) bool {
	switch h.Op {
	case OpLiteral, OpByte:
		return h.Rune != '\n'
	case OpClass:
		h.Class.difference(&Class{Ranges: []Range{{'\n', '\n'}}})
		return len(h.Class.Ranges) > 0
	}
	for _, s := range h.Subs {
		if !StripNewline(s) {
			return false
		}
	}
	return true
}

// goEmitter writes a translated pattern in Go's regexp syntax.
type goEmitter struct {
	b strings.Builder
	// size counts the nodes written, so that spelling out repetitions (below) cannot
	// grow without bound; over goMaxNodes the pattern is refused as too big.
	size int
}

// goRepeatMax is the largest product of nested repetition counts Go's syntax takes
// (Rust's has none, only a limit on the compiled size).
const goRepeatMax = 1000

// goMaxNodes bounds how far repetitions are spelled out.
const goMaxNodes = 1 << 20

// goSyntax writes h in Go's syntax; budget is what counted repetitions below may
// still multiply to. It reports false when the pattern is too big to spell out.
func (e *goEmitter) goSyntax(h *Hir, budget int) bool {
	e.size++
	if e.size > goMaxNodes {
		return false
	}
	b := &e.b
	switch h.Op {
	case OpEmpty:
		b.WriteString("(?:)")
	case OpLiteral:
		if h.Fold {
			b.WriteString("(?i:")
			writeGoRune(b, h.Rune)
			b.WriteString(")")
		} else {
			writeGoRune(b, h.Rune)
		}
	case OpByte:
		// Go matches runes: a byte above 0x7F can only be met as an invalid one.
		b.WriteString(`\x{FFFD}`)
	case OpClass:
		writeGoClass(b, h.Class)
	case OpLineStart:
		b.WriteString("(?m:^)")
	case OpLineEnd:
		b.WriteString("(?m:$)")
	case OpWordBoundary:
		b.WriteString(`\b`)
	case OpNotWordBoundary:
		b.WriteString(`\B`)
	case OpRepeat:
		return e.repeat(h, budget)
	case OpConcat:
		if len(h.Subs) == 0 {
			b.WriteString("(?:)")
		}
		for _, s := range h.Subs {
			if s.Op == OpAlternate {
				b.WriteString("(?:")
			}
			if !e.goSyntax(s, budget) {
				return false
			}
			if s.Op == OpAlternate {
				b.WriteString(")")
			}
		}
	case OpAlternate:
		for i, s := range h.Subs {
			if i > 0 {
				b.WriteByte('|')
			}
			if !e.goSyntax(s, budget) {
				return false
			}
		}
	}
	return true
}

func (e *goEmitter) repeat(h *Hir, budget int) bool {
	b := &e.b
	sub := func(budget int) bool {
		b.WriteString("(?:")
		ok := e.goSyntax(h.Subs[0], budget)
		b.WriteString(")")
		return ok
	}
	lazy := ""
	if !h.greedy {
		lazy = "?"
	}
	switch {
	case h.Min == 0 && h.Max == 1:
		ok := sub(budget)
		b.WriteString("?" + lazy)
		return ok
	case h.Min == 0 && h.Max < 0:
		ok := sub(budget)
		b.WriteString("*" + lazy)
		return ok
	case h.Min == 1 && h.Max < 0:
		ok := sub(budget)
		b.WriteString("+" + lazy)
		return ok
	}
	count := h.Max
	if count < 0 {
		count = h.Min
	}
	if count <= budget {
		inner := budget
		if count > 0 {
			inner = budget / count
		}
		ok := sub(inner)
		b.WriteString("{" + strconv.Itoa(h.Min))
		if h.Max < 0 {
			b.WriteString(",")
		} else if h.Max != h.Min {
			b.WriteString("," + strconv.Itoa(h.Max))
		}
		b.WriteString("}" + lazy)
		return ok
	}
	// Beyond what Go's syntax takes: spell the repetition out, as copies of the
	// repeated part, optional ones for the range above the minimum.
	for i := 0; i < h.Min; i++ {
		if !sub(budget) {
			return false
		}
	}
	if h.Max < 0 {
		ok := sub(budget)
		b.WriteString("*" + lazy)
		return ok
	}
	for i := h.Min; i < h.Max; i++ {
		if !sub(budget) {
			return false
		}
		b.WriteString("?" + lazy)
	}
	return true
}

func writeGoRune(b *strings.Builder, r rune) {
	switch {
	case r < 0x20 || r == 0x7F || !utf8.ValidRune(r) || !unicode.IsPrint(r):
		b.WriteString(`\x{` + strconv.FormatInt(int64(r), 16) + `}`)
	case strings.ContainsRune(`\.+*?()|[]{}^$`, r):
		b.WriteByte('\\')
		b.WriteRune(r)
	default:
		b.WriteRune(r)
	}
}

func writeGoClass(b *strings.Builder, c *Class) {
	c.Canon()
	r := c.Ranges
	if c.Bytes {
		// Go matches runes: bytes above 0x7F stand for any non-ASCII character (an
		// invalid byte reads as U+FFFD).
		var rr []Range
		high := false
		for _, x := range r {
			if x.Hi > 0x7F {
				high = true
				x.Hi = 0x7F
			}
			if x.Lo <= x.Hi {
				rr = append(rr, x)
			}
		}
		if high {
			rr = append(rr, Range{0x80, unicode.MaxRune})
		}
		n := &Class{Ranges: rr}
		n.Canon()
		r = n.Ranges
	}
	switch {
	case len(r) == 0:
		b.WriteString(`[^\x00-\x{10FFFF}]`) // matches nothing
		return
	case len(r) == 1 && r[0].Lo == r[0].Hi:
		writeGoRune(b, r[0].Lo)
		return
	case len(r) == 2 && r[0].Lo == 0 && r[0].Hi == '\n'-1 && r[1].Lo == '\n'+1 && r[1].Hi == unicode.MaxRune:
		b.WriteString("(?-s:.)")
		return
	case len(r) == 1 && r[0].Lo == 0 && r[0].Hi == unicode.MaxRune:
		b.WriteString("(?s:.)")
		return
	}
	b.WriteByte('[')
	for _, x := range r {
		b.WriteString(`\x{` + strconv.FormatInt(int64(x.Lo), 16) + `}`)
		if x.Hi != x.Lo {
			b.WriteString(`-\x{` + strconv.FormatInt(int64(x.Hi), 16) + `}`)
		}
	}
	b.WriteByte(']')
}

// Translate parses pattern as ripgrep 13 would (caseInsensitive being its
// --ignore-case) and translates it, or gives ripgrep's error message; GoSyntax writes
// the result in Go's regexp syntax.
func Translate(pattern string, caseInsensitive bool) (*Hir, string) {
	ast, perr := parseRustRegex(pattern)
	if perr != nil {
		return nil, ErrorText(perr.Error())
	}
	t := &rxTranslator{pat: pattern, flags: rxTransFlags{m: 1}}
	if caseInsensitive {
		t.flags.i = 1
	}
	h, terr := t.trans(ast)
	if terr != nil {
		return nil, ErrorText(terr.Error())
	}
	if !StripNewline(h) {
		return nil, ErrorText(NewlineError)
	}
	return h, ""
}

// ASCIIOnly returns h as it can match ASCII text: classes lose their non-ASCII members
// and characters beyond ASCII can never match. On a line of ASCII text it matches
// exactly where h does, and Go's regexp runs it much faster when h has big Unicode
// classes (\w, \d, \s, \p{…}, negations), whose every test is a binary search.
func ASCIIOnly(h *Hir) *Hir {
	never := &Hir{Op: OpClass, Class: &Class{}}
	switch h.Op {
	case OpLiteral:
		if h.Fold { // its case folds may be ASCII (ſ folds to s, the Kelvin sign to k)
			c := &Class{}
			c.Add(h.Rune, h.Rune)
			c.FoldCase()
			return ASCIIOnly(&Hir{Op: OpClass, Class: c})
		}
		if h.Rune > 0x7F {
			return never
		}
	case OpByte:
		return never
	case OpClass:
		c := &Class{Ranges: append([]Range(nil), h.Class.Ranges...), Bytes: h.Class.Bytes}
		c.intersect(&Class{Ranges: []Range{{0, 0x7F}}})
		return &Hir{Op: OpClass, Class: c}
	}
	if len(h.Subs) == 0 {
		return h
	}
	n := *h
	n.Subs = make([]*Hir, len(h.Subs))
	for i, s := range h.Subs {
		n.Subs[i] = ASCIIOnly(s)
	}
	return &n
}

// GoSyntax writes h in Go's syntax, or gives ripgrep's message for a pattern too big
// to compile (the regex crate's limit is 100MB of compiled program; ours is what can
// be spelled out in Go's syntax).
func GoSyntax(h *Hir) (string, string) {
	e := &goEmitter{}
	if !e.goSyntax(h, goRepeatMax) {
		return "", SizeLimitError
	}
	return e.b.String(), ""
}

// SizeLimitError is ripgrep's message for a pattern whose compiled form is too big.
const SizeLimitError = "Compiled regex exceeds size limit of 104857600 bytes."

// Error is the error as ripgrep prints it: "regex parse error:", the pattern with
// carets under the span(s), and the message (regex-syntax's error formatter).
func (e *rxError) Error() string {
	pat := e.pattern
	lines := strings.Split(pat, "\n")
	if strings.HasSuffix(pat, "\n") {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	count := len(lines)
	if strings.HasSuffix(pat, "\n") {
		count++
	}
	width := 0
	if count > 1 {
		width = len(strconv.Itoa(count))
	}
	spans := []rxSpan{e.span}
	if e.aux != nil {
		spans = append(spans, *e.aux)
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].start.off != spans[j].start.off {
			return spans[i].start.off < spans[j].start.off
		}
		return spans[i].end.off < spans[j].end.off
	})
	byLine := make([][]rxSpan, count+1)
	var multi []rxSpan
	for _, s := range spans {
		if s.start.line == s.end.line {
			byLine[s.start.line-1] = append(byLine[s.start.line-1], s)
		} else {
			multi = append(multi, s)
		}
	}
	var b strings.Builder
	b.WriteString("regex parse error:\n")
	divider := strings.Repeat("~", 79)
	if strings.Contains(pat, "\n") {
		b.WriteString(divider + "\n")
	}
	for i, l := range lines {
		if width > 0 {
			n := strconv.Itoa(i + 1)
			b.WriteString(strings.Repeat(" ", width-len(n)) + n + ": ")
		} else {
			b.WriteString("    ")
		}
		b.WriteString(l + "\n")
		if len(byLine[i]) == 0 {
			continue
		}
		pad := 4
		if width > 0 {
			pad = 2 + width
		}
		b.WriteString(strings.Repeat(" ", pad))
		pos := 0
		for _, s := range byLine[i] {
			for ; pos < s.start.col-1; pos++ {
				b.WriteByte(' ')
			}
			n := max(1, s.end.col-s.start.col)
			b.WriteString(strings.Repeat("^", n))
			pos += n
		}
		b.WriteByte('\n')
	}
	if strings.Contains(pat, "\n") {
		b.WriteString(divider + "\n")
		var notes []string
		for _, s := range multi {
			notes = append(notes, "on line "+strconv.Itoa(s.start.line)+" (column "+strconv.Itoa(s.start.col)+") through line "+strconv.Itoa(s.end.line)+" (column "+strconv.Itoa(s.end.col-1)+")")
		}
		if len(notes) > 0 {
			b.WriteString(strings.Join(notes, "\n") + "\n")
		}
	}
	b.WriteString("error: " + e.msg)
	return b.String()
}
