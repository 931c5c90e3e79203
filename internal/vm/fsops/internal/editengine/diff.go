package editengine

import (
	"strconv"
	"strings"
)

// Details is edit's details object, as pi builds it (generateEditDiff).
type Details struct {
	// Diff is pi's display diff: "+N text", "-N text", " N text" lines and " ..." skips.
	Diff string `json:"diff"`
	// Patch is a unified patch with "--- path"/"+++ path" headers and 4 lines of context.
	Patch string `json:"patch"`
	// FirstChangedLine is the new file's first changed line, 1-based.
	FirstChangedLine *int `json:"firstChangedLine,omitempty"`
}

// diffContextLines is the context pi shows around changes, in both diff and patch.
const diffContextLines = 4

// diffWindowMargin is how many unchanged lines around a replacement pi diffs: far more
// than the context shown, so the diff of a window aligns as the whole file's would.
const diffWindowMargin = 32

func itoa(n int) string { return strconv.Itoa(n) }

// padLeft right-aligns s in width columns, as String.padStart does.
func padLeft(s string, width int) string {
	if len(s) >= width {
		return s
	}
	return strings.Repeat(" ", width-len(s)) + s
}

// countLineFeeds counts "\n" in s.
func countLineFeeds(s string) int { return strings.Count(s, "\n") }

// generateEditDiff is pi's generateEditDiff: the display diff and the patch, computed
// only over windows of whole lines around the (sorted, disjoint) replacements, the new
// text's windows cut from the replacements without building it.
func generateEditDiff(path string, edited spliced) Details {
	base, reps := edited.base, edited.reps
	baseLF := countLineFeeds(base)
	width := len(itoa(max(baseLF+1, edited.lineFeeds(baseLF)+1)))
	skip := " " + strings.Repeat(" ", width) + " ..."
	var out []string
	var hunks []patchHunk
	var first *int
	for _, w := range diffWindows(base, reps) {
		oldText := base[w.oldStart:w.oldEnd]
		newText := edited.slice(w.newStart, w.newEnd)
		shown, changed := formatDisplayDiff(diffLines(oldText, newText), w.oldLine+1, w.newLine+1, width, diffContextLines)
		if first == nil && changed != nil {
			first = changed
		}
		// Both windows around a run of unchanged lines mark it skipped; show one marker.
		if len(out) > 0 && out[len(out)-1] == skip && len(shown) > 0 && shown[0] == skip {
			shown = shown[1:]
		}
		out = append(out, shown...)
		for _, h := range structuredPatchHunks(oldText, newText, diffContextLines) {
			h.oldStart += w.oldLine
			h.newStart += w.newLine
			hunks = append(hunks, h)
		}
	}
	return Details{Diff: strings.Join(out, "\n"), Patch: formatPatch(path, path, hunks), FirstChangedLine: first}
}

// diffWindow is a range of whole lines of the old text and the matching range of the new.
type diffWindow struct {
	oldStart, oldEnd, oldLine int
	newStart, newEnd, newLine int
}

// lineStartBefore is the start of the line containing offset.
func lineStartBefore(text string, offset int) int {
	if offset == 0 {
		return 0
	}
	return strings.LastIndexByte(text[:offset], '\n') + 1
}

// indexFrom is JavaScript's text.indexOf("\n", from).
func indexFrom(text string, from int) int {
	if from > len(text) {
		return -1
	}
	i := strings.IndexByte(text[from:], '\n')
	if i < 0 {
		return -1
	}
	return from + i
}

// diffWindows is pi's getDiffWindows: margin lines around each replacement, merged when
// they touch.
func diffWindows(base string, reps []replacement) []diffWindow {
	var windows []diffWindow
	offsetDelta, lineDelta, cursorOffset, cursorLine := 0, 0, 0, 0
	for _, r := range reps {
		matchEnd := r.index + r.length
		start := lineStartBefore(base, r.index)
		for i := 0; i < diffWindowMargin && start > 0; i++ {
			start = lineStartBefore(base, start-1)
		}
		end := matchEnd
		for i := 0; i <= diffWindowMargin && end < len(base); i++ {
			from := end
			if i == 0 {
				from = max(matchEnd-1, r.index)
			}
			if lf := indexFrom(base, from); lf < 0 {
				end = len(base)
			} else {
				end = lf + 1
			}
		}
		repOffsetDelta := len(r.newText) - r.length
		repLineDelta := countLineFeeds(r.newText) - countLineFeeds(base[r.index:matchEnd])
		if n := len(windows); n > 0 && start <= windows[n-1].oldEnd {
			prev := &windows[n-1]
			prev.oldEnd = max(prev.oldEnd, end)
			prev.newEnd = prev.oldEnd + offsetDelta + repOffsetDelta
		} else {
			cursorLine += countLineFeeds(base[cursorOffset:start])
			cursorOffset = start
			windows = append(windows, diffWindow{
				oldStart: start, oldEnd: end, oldLine: cursorLine,
				newStart: start + offsetDelta, newEnd: end + offsetDelta + repOffsetDelta, newLine: cursorLine + lineDelta,
			})
		}
		offsetDelta += repOffsetDelta
		lineDelta += repLineDelta
	}
	return windows
}

// formatDisplayDiff is pi's formatDisplayDiff: numbered changed lines with up to context
// unchanged lines around them and " ..." where lines are skipped. It also returns the
// new-file line of the first change, nil when nothing changed.
func formatDisplayDiff(parts []diffPart, oldLine, newLine, width, context int) ([]string, *int) {
	var out []string
	var first *int
	lastWasChange := false
	skip := " " + strings.Repeat(" ", width) + " ..."
	emit := func(prefix string, n int, line string) {
		out = append(out, prefix+padLeft(itoa(n), width)+" "+line)
	}
	ctxLine := func(line string) {
		emit(" ", oldLine, line)
		oldLine++
		newLine++
	}
	for i, p := range parts {
		raw := strings.Split(p.value, "\n")
		if raw[len(raw)-1] == "" {
			raw = raw[:len(raw)-1]
		}
		if p.added || p.removed {
			if first == nil {
				n := newLine
				first = &n
			}
			for _, line := range raw {
				if p.added {
					emit("+", newLine, line)
					newLine++
				} else {
					emit("-", oldLine, line)
					oldLine++
				}
			}
			lastWasChange = true
			continue
		}
		nextIsChange := i < len(parts)-1 && (parts[i+1].added || parts[i+1].removed)
		switch {
		case lastWasChange && nextIsChange:
			if len(raw) <= context*2 {
				for _, line := range raw {
					ctxLine(line)
				}
			} else {
				for _, line := range raw[:context] {
					ctxLine(line)
				}
				out = append(out, skip)
				skipped := len(raw) - 2*context
				oldLine += skipped
				newLine += skipped
				for _, line := range raw[len(raw)-context:] {
					ctxLine(line)
				}
			}
		case lastWasChange:
			shown := raw[:min(context, len(raw))]
			for _, line := range shown {
				ctxLine(line)
			}
			if skipped := len(raw) - len(shown); skipped > 0 {
				out = append(out, skip)
				oldLine += skipped
				newLine += skipped
			}
		case nextIsChange:
			skipped := max(0, len(raw)-context)
			if skipped > 0 {
				out = append(out, skip)
				oldLine += skipped
				newLine += skipped
			}
			for _, line := range raw[skipped:] {
				ctxLine(line)
			}
		default:
			oldLine += len(raw)
			newLine += len(raw)
		}
		lastWasChange = false
	}
	return out, first
}
