package editengine

import (
	"math"
	"strings"
)

// This file reproduces the parts of jsdiff 8 (the "diff" npm package pi uses) that end up
// in edit's details: diffLines, structuredPatch's hunks and formatPatch. The Myers search
// below keeps jsdiff's exact choices (which path to extend on ties, pruning at the graph
// edges), because a different but equally short diff would print differently.

// diffPart is one jsdiff change object.
type diffPart struct {
	value          string
	count          int
	added, removed bool
}

// diffComponent is a node of jsdiff's reversed linked list of changes.
type diffComponent struct {
	count          int
	added, removed bool
	prev           *diffComponent
}

type diffPath struct {
	oldPos int
	last   *diffComponent
}

// lineTokens is jsdiff's line tokenizer: each line keeps its "\n" (or "\r\n").
func lineTokens(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// diffLines is jsdiff's diffLines(oldStr, newStr) with default options.
func diffLines(oldStr, newStr string) []diffPart {
	oldT, newT := lineTokens(oldStr), lineTokens(newStr)
	oldLen, newLen := len(oldT), len(newT)
	maxEdit := oldLen + newLen
	// bestPath is indexed by diagonal, which ranges over [-maxEdit-1, maxEdit+1].
	bestPath := make([]*diffPath, 2*maxEdit+3)
	at := func(d int) **diffPath { return &bestPath[d+maxEdit+1] }

	*at(0) = &diffPath{oldPos: -1}
	newPos := extractCommon(*at(0), newT, oldT, 0)
	if (*at(0)).oldPos+1 >= oldLen && newPos+1 >= newLen {
		return buildValues((*at(0)).last, newT, oldT)
	}
	minDiag, maxDiag := math.MinInt, math.MaxInt
	for editLength := 1; editLength <= maxEdit; editLength++ {
		for d := max(minDiag, -editLength); d <= min(maxDiag, editLength); d += 2 {
			removePath, addPath := *at(d - 1), *at(d + 1)
			if removePath != nil {
				*at(d - 1) = nil // nobody else will extend it
			}
			canAdd := false
			if addPath != nil {
				addNewPos := addPath.oldPos - d
				canAdd = 0 <= addNewPos && addNewPos < newLen
			}
			canRemove := removePath != nil && removePath.oldPos+1 < oldLen
			if !canAdd && !canRemove {
				*at(d) = nil
				continue
			}
			var base *diffPath
			if !canRemove || (canAdd && removePath.oldPos < addPath.oldPos) {
				base = addToPath(addPath, true, false, 0)
			} else {
				base = addToPath(removePath, false, true, 1)
			}
			newPos = extractCommon(base, newT, oldT, d)
			if base.oldPos+1 >= oldLen && newPos+1 >= newLen {
				return buildValues(base.last, newT, oldT)
			}
			*at(d) = base
			if base.oldPos+1 >= oldLen {
				maxDiag = min(maxDiag, d-1)
			}
			if newPos+1 >= newLen {
				minDiag = max(minDiag, d+1)
			}
		}
	}
	return nil // unreachable: an edit script of length oldLen+newLen always exists
}

func addToPath(p *diffPath, added, removed bool, oldPosInc int) *diffPath {
	last := p.last
	if last != nil && last.added == added && last.removed == removed {
		return &diffPath{oldPos: p.oldPos + oldPosInc,
			last: &diffComponent{count: last.count + 1, added: added, removed: removed, prev: last.prev}}
	}
	return &diffPath{oldPos: p.oldPos + oldPosInc,
		last: &diffComponent{count: 1, added: added, removed: removed, prev: last}}
}

func extractCommon(p *diffPath, newT, oldT []string, diag int) int {
	oldPos := p.oldPos
	newPos := oldPos - diag
	common := 0
	for newPos+1 < len(newT) && oldPos+1 < len(oldT) && oldT[oldPos+1] == newT[newPos+1] {
		newPos++
		oldPos++
		common++
	}
	if common > 0 {
		p.last = &diffComponent{count: common, prev: p.last}
	}
	p.oldPos = oldPos
	return newPos
}

func buildValues(last *diffComponent, newT, oldT []string) []diffPart {
	var comps []*diffComponent
	for c := last; c != nil; c = c.prev {
		comps = append(comps, c)
	}
	parts := make([]diffPart, 0, len(comps))
	newPos, oldPos := 0, 0
	for i := len(comps) - 1; i >= 0; i-- {
		c := comps[i]
		p := diffPart{count: c.count, added: c.added, removed: c.removed}
		if !c.removed {
			p.value = strings.Join(newT[newPos:newPos+c.count], "")
			newPos += c.count
			if !c.added {
				oldPos += c.count
			}
		} else {
			p.value = strings.Join(oldT[oldPos:oldPos+c.count], "")
			oldPos += c.count
		}
		parts = append(parts, p)
	}
	return parts
}

// patchHunk is one hunk of jsdiff's structuredPatch.
type patchHunk struct {
	oldStart, oldLines, newStart, newLines int
	lines                                  []string
}

// splitPatchLines is jsdiff's splitLines: lines keeping their "\n".
func splitPatchLines(text string) []string {
	parts := strings.Split(text, "\n")
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = p + "\n"
	}
	if strings.HasSuffix(text, "\n") {
		return out[:len(out)-1]
	}
	out[len(out)-1] = parts[len(parts)-1]
	return out
}

// structuredPatchHunks is the hunks of jsdiff's structuredPatch(…, {context}).
func structuredPatchHunks(oldStr, newStr string, context int) []patchHunk {
	diff := diffLines(oldStr, newStr)
	diff = append(diff, diffPart{}) // jsdiff's sentinel, which simplifies the last hunk
	lines := make([][]string, len(diff))
	for i, p := range diff {
		if i == len(diff)-1 {
			lines[i] = nil
		} else {
			lines[i] = splitPatchLines(p.value)
		}
	}
	ctxLines := func(ls []string) []string {
		out := make([]string, len(ls))
		for i, l := range ls {
			out[i] = " " + l
		}
		return out
	}
	var hunks []patchHunk
	oldRangeStart, newRangeStart, oldLine, newLine := 0, 0, 1, 1
	var cur []string
	for i, part := range diff {
		ls := lines[i]
		if part.added || part.removed {
			if oldRangeStart == 0 {
				oldRangeStart, newRangeStart = oldLine, newLine
				if i > 0 {
					prev := lines[i-1]
					if context > 0 {
						cur = ctxLines(prev[max(0, len(prev)-context):])
					} else {
						cur = nil
					}
					oldRangeStart -= len(cur)
					newRangeStart -= len(cur)
				}
			}
			sign := "-"
			if part.added {
				sign = "+"
			}
			for _, l := range ls {
				cur = append(cur, sign+l)
			}
			if part.added {
				newLine += len(ls)
			} else {
				oldLine += len(ls)
			}
			continue
		}
		if oldRangeStart != 0 {
			if len(ls) <= context*2 && i < len(diff)-2 {
				cur = append(cur, ctxLines(ls)...)
			} else {
				n := min(len(ls), context)
				cur = append(cur, ctxLines(ls[:n])...)
				hunks = append(hunks, patchHunk{
					oldStart: oldRangeStart, oldLines: oldLine - oldRangeStart + n,
					newStart: newRangeStart, newLines: newLine - newRangeStart + n,
					lines: cur,
				})
				oldRangeStart, newRangeStart, cur = 0, 0, nil
			}
		}
		oldLine += len(ls)
		newLine += len(ls)
	}
	for h := range hunks {
		var out []string
		for _, l := range hunks[h].lines {
			if strings.HasSuffix(l, "\n") {
				out = append(out, l[:len(l)-1])
			} else {
				out = append(out, l, `\ No newline at end of file`)
			}
		}
		hunks[h].lines = out
	}
	return hunks
}

// formatPatch is jsdiff's formatPatch with FILE_HEADERS_ONLY and no header suffixes.
func formatPatch(oldName, newName string, hunks []patchHunk) string {
	var b strings.Builder
	b.WriteString("--- " + oldName + "\n+++ " + newName)
	for _, h := range hunks {
		// Unified diff quirk: an empty range starts one line earlier.
		os, ns := h.oldStart, h.newStart
		if h.oldLines == 0 {
			os--
		}
		if h.newLines == 0 {
			ns--
		}
		b.WriteString("\n@@ -" + itoa(os) + "," + itoa(h.oldLines) + " +" + itoa(ns) + "," + itoa(h.newLines) + " @@")
		for _, l := range h.lines {
			b.WriteString("\n" + l)
		}
	}
	b.WriteString("\n")
	return b.String()
}
