package editengine

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"
)

// replacement is a matched edit: the byte range [index, index+length) of the text it was
// matched in, and what replaces it. Offsets are bytes where pi's are UTF-16 units; they
// are only ever used to cut the same strings, so the results are the same.
type replacement struct {
	editIndex int
	index     int
	length    int
	newText   string
}

// normalizeToLF turns CRLF and lone CR into LF.
func normalizeToLF(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

var fuzzyReplacer = strings.NewReplacer(
	"\u2018", "'", "\u2019", "'", "\u201A", "'", "\u201B", "'",
	"\u201C", `"`, "\u201D", `"`, "\u201E", `"`, "\u201F", `"`,
	"\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-", "\u2015", "-", "\u2212", "-",
	"\u00A0", " ", "\u2002", " ", "\u2003", " ", "\u2004", " ", "\u2005", " ", "\u2006", " ",
	"\u2007", " ", "\u2008", " ", "\u2009", " ", "\u200A", " ", "\u202F", " ", "\u205F", " ", "\u3000", " ",
)

// normalizeForFuzzyMatch is pi's: NFKC, trailing whitespace cut from every line, and
// typographic quotes, dashes and spaces made ASCII. Each step returns its input unchanged
// (without copying) when there is nothing to do, which is the common case for source files.
func normalizeForFuzzyMatch(s string) string {
	s = norm.NFKC.String(s)
	s = trimLineEnds(s)
	if hasFuzzyChars(s) {
		s = fuzzyReplacer.Replace(s)
	}
	return s
}

// hasFuzzyChars reports whether s holds a character fuzzyReplacer rewrites. They all
// begin with byte 0xC2, 0xE2 or 0xE3 in UTF-8, which IndexByte finds quickly; the exact
// check runs only when one of those bytes is present.
func hasFuzzyChars(s string) bool {
	if strings.IndexByte(s, 0xE2) < 0 && strings.IndexByte(s, 0xC2) < 0 && strings.IndexByte(s, 0xE3) < 0 {
		return false
	}
	return strings.ContainsAny(s, fuzzyChars)
}

// fuzzyChars are the characters fuzzyReplacer rewrites.
const fuzzyChars = "\u2018\u2019\u201A\u201B\u201C\u201D\u201E\u201F\u2010\u2011\u2012\u2013\u2014\u2015\u2212" +
	"\u00A0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200A\u202F\u205F\u3000"

// trimLineEnds removes trailing JavaScript whitespace from every "\n"-separated line, as
// text.split("\n").map(l => l.trimEnd()).join("\n") does (appendTrimLineEnds into a new
// buffer). It returns s itself, without copying, when no line has trailing whitespace.
func trimLineEnds(s string) string {
	b, changed := appendTrimLineEnds(nil, s)
	if !changed {
		return s
	}
	return bytesString(b) // b is new and never changed afterwards
}

// isJSSpace is JavaScript's WhiteSpace or LineTerminator, what String.prototype.trimEnd
// removes. Unlike unicode.IsSpace it includes U+FEFF and excludes U+0085.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', '\u00A0', '\u1680', '\u2028', '\u2029', '\u202F', '\u205F', '\u3000', '\uFEFF':
		return true
	}
	return r >= '\u2000' && r <= '\u200A'
}

// match is pi's fuzzyFindText result.
type match struct {
	found   bool
	index   int
	length  int
	isFuzzy bool
}

// fuzzyText is a text with its fuzzy-normalized form computed at most once: pi
// normalizes the whole file again for every edit and every occurrence count, which costs
// several copies of a large file each time.
type fuzzyText struct {
	text  string
	fuzzy *string
	inert bool // normalizing was seen to change nothing: text is its own normalization
}

func (f *fuzzyText) normalized() string {
	if f.fuzzy == nil {
		n := normalizeForFuzzyMatch(f.text)
		f.fuzzy = &n
	}
	return *f.fuzzy
}

// find is pi's fuzzyFindText: oldText found exactly, else in fuzzy-normalized space
// (offsets then refer to the normalized text).
func (f *fuzzyText) find(oldText string) match {
	if i := strings.Index(f.text, oldText); i >= 0 {
		return match{found: true, index: i, length: len(oldText)}
	}
	fo := normalizeForFuzzyMatch(oldText)
	if f.fuzzy == nil && f.countNormalized(fo) == 0 {
		return match{} // not there either: no need to build the normalized text
	}
	if i := strings.Index(f.normalized(), fo); i >= 0 {
		return match{found: true, index: i, length: len(fo), isFuzzy: true}
	}
	return match{}
}

// count is pi's countOccurrences: oldText counted in fuzzy space as JavaScript's
// content.split(oldText).length - 1 does; an empty needle splits between UTF-16 units.
func (f *fuzzyText) count(oldText string) int {
	return f.countNormalized(normalizeForFuzzyMatch(oldText))
}

// countNormalized counts fo in the normalized text, normalizing piece by piece when the
// whole normalized text has not been built: counting needs no copy of the file.
func (f *fuzzyText) countNormalized(fo string) int {
	switch {
	case f.fuzzy != nil || f.inert:
		fc := f.text
		if f.fuzzy != nil {
			fc = *f.fuzzy
		}
		if fo == "" {
			return utf16Len(fc) - 1
		}
		return strings.Count(fc, fo)
	}
	c := streamCounter{needle: fo}
	inert := true
	eachFuzzyPiece(f.text, fuzzyPiece, func(piece string, same bool) {
		inert = inert && same
		c.feed(piece)
	})
	f.inert = inert
	return c.count()
}

// countOccurrences is count on a one-off text.
func countOccurrences(content, oldText string) int {
	return (&fuzzyText{text: content}).count(oldText)
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += max(1, utf16.RuneLen(r))
	}
	return n
}

// editError picks pi's single-edit or multi-edit wording.
func editError(total int, single, multi string) error {
	if total == 1 {
		return errors.New(single)
	}
	return errors.New(multi)
}

// applyEdits is pi's applyEditsToNormalizedContent: every edit matched against the same
// LF-normalized content, exactly or — if any edit needs it — all in fuzzy space with the
// replacements widened to whole lines, checked for uniqueness and overlap, and applied.
func applyEdits(content string, edits []Replacement, path string) (spliced, error) {
	n := len(edits)
	norm := make([]Replacement, n)
	for i, e := range edits {
		norm[i] = Replacement{OldText: normalizeToLF(e.OldText), NewText: normalizeToLF(e.NewText)}
	}
	for i, e := range norm {
		if e.OldText == "" {
			return spliced{}, editError(n, fmt.Sprintf("oldText must not be empty in %s.", path),
				fmt.Sprintf("edits[%d].oldText must not be empty in %s.", i, path))
		}
	}
	orig := &fuzzyText{text: content}
	usedFuzzy := false
	for _, e := range norm {
		if orig.find(e.OldText).isFuzzy {
			usedFuzzy = true
			break
		}
	}
	base := orig
	if usedFuzzy {
		base = &fuzzyText{text: orig.normalized()}
	}
	matched := make([]replacement, 0, n)
	for i, e := range norm {
		m := base.find(e.OldText)
		if !m.found {
			return spliced{}, editError(n,
				fmt.Sprintf("Could not find the exact text in %s. The old text must match exactly including all whitespace and newlines.", path),
				fmt.Sprintf("Could not find edits[%d] in %s. The oldText must match exactly including all whitespace and newlines.", i, path))
		}
		if c := base.count(e.OldText); c > 1 {
			return spliced{}, editError(n,
				fmt.Sprintf("Found %d occurrences of the text in %s. The text must be unique. Please provide more context to make it unique.", c, path),
				fmt.Sprintf("Found %d occurrences of edits[%d] in %s. Each oldText must be unique. Please provide more context to make it unique.", c, i, path))
		}
		matched = append(matched, replacement{editIndex: i, index: m.index, length: m.length, newText: e.NewText})
	}
	sort.SliceStable(matched, func(a, b int) bool { return matched[a].index < matched[b].index })
	for i := 1; i < len(matched); i++ {
		prev, cur := matched[i-1], matched[i]
		if prev.index+prev.length > cur.index {
			return spliced{}, fmt.Errorf("edits[%d] and edits[%d] overlap in %s. Merge them into one edit or target disjoint regions.", prev.editIndex, cur.editIndex, path)
		}
	}
	reps := matched
	if usedFuzzy {
		var err error
		if reps, err = widenToLines(content, base.text, matched); err != nil {
			return spliced{}, err
		}
	}
	out := spliced{base: content, reps: reps}
	if out.equalsBase() {
		return spliced{}, editError(n,
			fmt.Sprintf("No changes made to %s. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.", path),
			fmt.Sprintf("No changes made to %s. The replacements produced identical content.", path))
	}
	return out, nil
}

// applyReplacements splices sorted, disjoint replacements into s, whose offset 0 is at
// offset in the text they were matched in.
func applyReplacements(s string, reps []replacement, offset int) string {
	size := len(s)
	for _, r := range reps {
		size += len(r.newText) - r.length
	}
	var b strings.Builder
	b.Grow(size)
	pos := 0
	for _, r := range reps {
		b.WriteString(s[pos : r.index-offset])
		b.WriteString(r.newText)
		pos = r.index - offset + r.length
	}
	b.WriteString(s[pos:])
	return b.String()
}

// spanCount is how many lines /[^\n]*\n|[^\n]+/g finds in s.
func spanCount(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && s[len(s)-1] != '\n' {
		n++
	}
	return n
}

// lineCursor finds the byte ranges of the lines of s (as /[^\n]*\n|[^\n]+/g splits
// it, "\n" included) by index, moving only forward: no table of every line's range,
// which for a large file would weigh a good part of the file itself.
type lineCursor struct {
	s         string
	line, off int // off is where line `line` starts
}

// start is where line k (k >= every k asked before, k < spanCount) starts.
func (c *lineCursor) start(k int) int {
	for c.line < k {
		c.off += strings.IndexByte(c.s[c.off:], '\n') + 1
		c.line++
	}
	return c.off
}

// end is where line k ends, its "\n" included.
func (c *lineCursor) end(k int) int {
	st := c.start(k)
	if i := strings.IndexByte(c.s[st:], '\n'); i >= 0 {
		return st + i + 1
	}
	return len(c.s)
}

var errOutsideBase = errors.New("Replacement range is outside the base content.")

// widenToLines is pi's widenReplacementsToLines: replacements matched in the fuzzy base
// become replacements of whole original lines, so untouched lines keep their bytes and
// only touched lines take the normalized text.
func widenToLines(original, base string, reps []replacement) ([]replacement, error) {
	if spanCount(original) != spanCount(base) {
		return nil, errors.New("Cannot preserve unchanged lines because the base content has a different line count.")
	}
	type group struct {
		startLine, endLine int
		reps               []replacement
	}
	var groups []*group
	// lineOf is the index of the line holding base offset off; offsets come in order
	// (the replacements are sorted and disjoint), so "\n" are counted once.
	counted, lines := 0, 0
	lineOf := func(off int) int {
		lines += strings.Count(base[counted:off], "\n")
		counted = off
		return lines
	}
	for _, r := range reps { // already sorted by index
		if r.index >= len(base) {
			return nil, errOutsideBase
		}
		start := lineOf(r.index)
		end := start // the first line whose end reaches the replacement's end
		if r.length > 0 {
			last := r.index + r.length - 1
			if last >= len(base) {
				return nil, errOutsideBase
			}
			end = lineOf(last)
		}
		if n := len(groups); n > 0 && start < groups[n-1].endLine {
			g := groups[n-1]
			g.endLine = max(g.endLine, end+1)
			g.reps = append(g.reps, r)
			continue
		}
		groups = append(groups, &group{startLine: start, endLine: end + 1, reps: []replacement{r}})
	}
	out := make([]replacement, len(groups))
	bc, oc := lineCursor{s: base}, lineCursor{s: original}
	for i, g := range groups {
		gs, ge := bc.start(g.startLine), bc.end(g.endLine-1)
		os := oc.start(g.startLine)
		out[i] = replacement{
			index:   os,
			length:  oc.end(g.endLine-1) - os,
			newText: applyReplacements(base[gs:ge], g.reps, gs),
		}
	}
	return out, nil
}

// applyToOriginal is pi's applyReplacementsToOriginal: replacements matched in the
// LF-normalized text applied to the original, so untouched text keeps its line endings and
// new line breaks take the ending of the line where the replaced range starts. It returns
// the result's pieces, in order.
func applyToOriginal(original string, reps []replacement) []string {
	crlfBefore := 0
	nextCRLF := strings.Index(original, "\r\n")
	toOriginal := func(off int) int {
		for nextCRLF != -1 && nextCRLF-crlfBefore < off {
			crlfBefore++
			if i := strings.Index(original[nextCRLF+2:], "\r\n"); i >= 0 {
				nextCRLF += 2 + i
			} else {
				nextCRLF = -1
			}
		}
		return off + crlfBefore
	}
	out := make([]string, 0, 2*len(reps)+1)
	endsWithCR := false
	push := func(part string) {
		if part == "" {
			return
		}
		// A CR before a seam and an LF after it would merge into one CRLF; pi adds an LF so
		// the file has the line breaks the diff shows.
		if endsWithCR && part[0] == '\n' {
			out = append(out, "\n")
		}
		out = append(out, part)
		endsWithCR = part[len(part)-1] == '\r'
	}
	pos := 0
	for _, r := range reps {
		start := toOriginal(r.index)
		push(original[pos:start])
		ending := lineEndingAt(original, start)
		if ending == "\n" {
			push(r.newText)
		} else {
			push(strings.ReplaceAll(r.newText, "\n", ending))
		}
		pos = toOriginal(r.index + r.length)
	}
	push(original[pos:])
	return out
}

// lineEndingAt is pi's getLineEndingAt.
func lineEndingAt(content string, off int) string {
	lf := indexFrom(content, off)
	if lf < 0 {
		lf = strings.LastIndexByte(content[:min(off+1, len(content))], '\n')
	}
	if lf < 0 {
		if strings.Contains(content, "\r") {
			return "\r"
		}
		return "\n"
	}
	if lf > 0 && content[lf-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// Replacement is one targeted edit.
type Replacement struct {
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}
