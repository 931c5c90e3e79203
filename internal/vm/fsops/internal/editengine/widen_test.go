package editengine

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// FuzzWidenToLines: widening with a forward line cursor gives what widening over a
// table of every line's range (the first implementation, below) gave, errors included.
func FuzzWidenToLines(f *testing.F) {
	f.Add("a \nb\u2019c\nd\n", "b'c", "B", "d", "D")
	f.Add("one  \ntwo  \nthree", "two\nthree", "2\n3", "one", "1")
	f.Add("x\u00A0y\n\nz", "x y", "xy", "z", "")
	f.Add("tail   ", "tail", "t", "", "")
	f.Fuzz(func(t *testing.T, content, old1, new1, old2, new2 string) {
		content = normalizeToLF(content)
		orig := &fuzzyText{text: content}
		base := orig.normalized()
		var reps []replacement
		for _, e := range [][2]string{{old1, new1}, {old2, new2}} {
			if e[0] == "" {
				continue
			}
			m := (&fuzzyText{text: base}).find(normalizeToLF(e[0]))
			if !m.found {
				return
			}
			reps = append(reps, replacement{index: m.index, length: m.length, newText: normalizeToLF(e[1])})
		}
		if len(reps) == 0 {
			return
		}
		if len(reps) == 2 {
			if reps[0].index > reps[1].index {
				reps[0], reps[1] = reps[1], reps[0]
			}
			if reps[0].index+reps[0].length > reps[1].index {
				return // overlapping: refused before widening
			}
		}
		want, wantErr := widenToLinesRef(content, base, reps)
		got, gotErr := widenToLines(content, base, reps)
		assert.Equal(t, wantErr, gotErr)
		assert.Equal(t, want, got)
	})
}

// lineSpan is a line's byte range, its "\n" included.
type lineSpanRef struct{ start, end int }

// lineSpans splits s like /[^\n]*\n|[^\n]+/g.
func lineSpansRef(s string) []lineSpanRef {
	var out []lineSpanRef
	for off := 0; off < len(s); {
		i := strings.IndexByte(s[off:], '\n')
		end := len(s)
		if i >= 0 {
			end = off + i + 1
		}
		out = append(out, lineSpanRef{off, end})
		off = end
	}
	return out
}

// widenToLines is pi's widenReplacementsToLines: replacements matched in the fuzzy base
// become replacements of whole original lines, so untouched lines keep their bytes and
// only touched lines take the normalized text.
func widenToLinesRef(original, base string, reps []replacement) ([]replacement, error) {
	origLines, baseLines := lineSpansRef(original), lineSpansRef(base)
	if len(origLines) != len(baseLines) {
		return nil, errors.New("Cannot preserve unchanged lines because the base content has a different line count.")
	}
	type group struct {
		startLine, endLine int
		reps               []replacement
	}
	var groups []*group
	for _, r := range reps { // already sorted by index
		start := -1
		for i, l := range baseLines {
			if r.index >= l.start && r.index < l.end {
				start = i
				break
			}
		}
		if start < 0 {
			return nil, errOutsideBase
		}
		end := start
		for end < len(baseLines) && baseLines[end].end < r.index+r.length {
			end++
		}
		if end >= len(baseLines) {
			return nil, errOutsideBase
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
	for i, g := range groups {
		gs, ge := baseLines[g.startLine].start, baseLines[g.endLine-1].end
		os := origLines[g.startLine].start
		out[i] = replacement{
			index:   os,
			length:  origLines[g.endLine-1].end - os,
			newText: applyReplacements(base[gs:ge], g.reps, gs),
		}
	}
	return out, nil
}
