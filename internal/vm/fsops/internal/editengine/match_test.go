package editengine

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// applyPatch applies a unified patch as produced by formatPatch to old, so tests can
// check that details.patch really turns the old text into the new.
func applyPatch(t *testing.T, old, patch string) string {
	t.Helper()
	oldLines := strings.SplitAfter(old, "\n")
	if oldLines[len(oldLines)-1] == "" {
		oldLines = oldLines[:len(oldLines)-1]
	}
	lines := strings.Split(strings.TrimSuffix(patch, "\n"), "\n")
	require.GreaterOrEqual(t, len(lines), 2)
	var out []string
	pos := 0 // next old line to copy
	for i := 2; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "@@ ") {
			var os, ol, ns, nl int
			_, err := fmt.Sscanf(l, "@@ -%d,%d +%d,%d @@", &os, &ol, &ns, &nl)
			require.NoError(t, err, l)
			start := os - 1
			if ol == 0 {
				start = os
			}
			require.GreaterOrEqual(t, start, pos, "hunks in order")
			out = append(out, oldLines[pos:start]...)
			pos = start
			continue
		}
		noNewline := i+1 < len(lines) && lines[i+1] == `\ No newline at end of file`
		text := l[1:]
		if !noNewline {
			text += "\n"
		}
		switch l[0] {
		case ' ':
			require.Equal(t, oldLines[pos], text, "context line %d", pos+1)
			out = append(out, text)
			pos++
		case '-':
			require.Equal(t, oldLines[pos], text, "removed line %d", pos+1)
			pos++
		case '+':
			out = append(out, text)
		case '\\':
		default:
			t.Fatalf("bad patch line %q", l)
		}
	}
	out = append(out, oldLines[pos:]...)
	return strings.Join(out, "")
}

// FuzzEditMatch feeds arbitrary files and edits to the matcher. Whatever it decides, it
// must not panic; when it succeeds, the patch must turn the old text into the new one, the
// replacement spliced into the CRLF original must normalize to the new text, and an exact
// unique edit must be a plain replacement.
func FuzzEditMatch(f *testing.F) {
	seeds := [][3]string{
		{"line1\nline2\r\nfoo bar\n", "line2", "LINE2"},
		{"a\nb\nc\n", "b\n", ""},
		{"x\r\ny\r\nz", "y", "Y\nW"},
		{"say \u201chi\u201d  \nend", `say "hi"`, "bye"},
		{"\uFF21\uFF22\n", "AB", "ab"},
		{"a\rb\rc", "b", "B\nC"},
		{"same\nsame\n", "same", "x"},
		{"", "a", "b"},
		{"tail   \nnext", "tail\nnext", "t\nn"},
		{strings.Repeat("row\n", 100) + "mid\n" + strings.Repeat("row\n", 100), "mid", "MID\nMID2"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, content, oldText, newText string) {
		original := content
		normalized := normalizeToLF(original)
		edits := []Replacement{{OldText: oldText, NewText: newText}}
		edited, err := applyEdits(normalized, edits, "f.txt")
		if err != nil {
			return
		}
		updated, reps := edited.String(), edited.reps
		assert.NotEqual(t, normalized, updated)
		details := generateEditDiff("f.txt", edited)
		require.NotNil(t, details.FirstChangedLine)
		assert.Equal(t, updated, applyPatch(t, normalized, details.Patch), "patch applies")
		if normalized != original {
			assert.Equal(t, updated, normalizeToLF(strings.Join(applyToOriginal(original, reps), "")), "CRLF splice")
		}
		lfOld := normalizeToLF(oldText)
		if strings.Count(normalized, lfOld) == 1 && countOccurrences(normalized, lfOld) == 1 {
			assert.Equal(t, strings.Replace(normalized, lfOld, normalizeToLF(newText), 1), updated, "exact edit")
		}
	})
}

// TestTrimLineEnds compares the single-pass trim with pi's split/trimEnd/join.
func TestTrimLineEnds(t *testing.T) {
	naive := func(s string) string {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimRightFunc(l, isJSSpace)
		}
		return strings.Join(lines, "\n")
	}
	pieces := []string{"a", " ", "\t", "\n", "\r", "\u00A0", "\uFEFF", "\u0085", "é", "\u3000", "x y"}
	rng := rand.New(rand.NewSource(5))
	inputs := []string{"", "\n", " \n ", "a  \nb\t\n\nc \u3000", "no trailing"}
	for i := 0; i < 2000; i++ {
		var b strings.Builder
		for j := rng.Intn(12); j > 0; j-- {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		inputs = append(inputs, b.String())
	}
	for _, in := range inputs {
		require.Equal(t, naive(in), trimLineEnds(in), "%q", in)
	}
}
