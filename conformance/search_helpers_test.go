//go:build e2e

package conformance

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// searchCase is one grep/find/ls call compared between pi (the oracle) and our binary.
type searchCase struct {
	name string
	tool string
	cwd  string
	args map[string]any
	// unordered compares the output lines as a set: pi's ripgrep and fd walk in
	// parallel, so their file order varies from run to run (ours is sorted).
	unordered bool
	// adjust, when set, turns pi's text into what we intend to print instead; each use
	// says why next to the case (an intended difference).
	adjust func(string) string
	// check, when set, replaces the comparison: for cases where pi's own output is not
	// deterministic (which files a limit keeps) or where we intentionally differ.
	check func(t *testing.T, pi, ours result.Result)
}

// runSearchCases runs every case through the oracle in one node process, then through
// `tool --local`, and compares text, details and isError.
func runSearchCases(t *testing.T, cases []searchCase) {
	t.Helper()
	calls := make([]Call, len(cases))
	for i, c := range cases {
		calls[i] = Call{Tool: c.tool, Cwd: c.cwd, Args: c.args}
	}
	want := oracle(t, calls)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := local(t, calls[i])
			if c.check != nil {
				c.check(t, want[i], got)
				return
			}
			wantText, gotText := onlyText(t, want[i]), onlyText(t, got)
			if c.adjust != nil {
				wantText = c.adjust(wantText)
			}
			if c.unordered {
				wantText, gotText = sortedBody(wantText), sortedBody(gotText)
			}
			assert.Equal(t, wantText, gotText, "text")
			assert.Equal(t, want[i].IsError, got.IsError, "isError")
			assert.Equal(t, detailsValue(t, want[i]), detailsValue(t, got), "details")
		})
	}
}

// onlyText returns the single text block of r.
func onlyText(t *testing.T, r result.Result) string {
	t.Helper()
	require.Len(t, r.Content, 1, "content blocks")
	require.Equal(t, "text", r.Content[0].Type)
	return r.Content[0].Text
}

// detailsValue decodes r's details for comparison (nil for pi's undefined).
func detailsValue(t *testing.T, r result.Result) any {
	t.Helper()
	if r.Details == nil {
		return nil
	}
	raw, err := json.Marshal(r.Details)
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(raw, &v))
	return v
}

// sortedBody sorts the output lines before the notice block.
func sortedBody(s string) string {
	body, notice := s, ""
	if i := strings.Index(s, "\n\n["); i >= 0 {
		body, notice = s[:i], s[i:]
	}
	lines := strings.Split(body, "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n") + notice
}

// dropLines removes the output lines for which drop is true (before the notice block).
func dropLines(drop func(string) bool) func(string) string {
	return func(s string) string {
		body, notice := s, ""
		if i := strings.Index(s, "\n\n["); i >= 0 {
			body, notice = s[:i], s[i:]
		}
		var kept []string
		for _, l := range strings.Split(body, "\n") {
			if !drop(l) {
				kept = append(kept, l)
			}
		}
		return strings.Join(kept, "\n") + notice
	}
}

// writeTree creates files (relative path → content) under root; a content starting
// with "->" makes a symbolic link to the rest.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		if target, ok := strings.CutPrefix(content, "->"); ok {
			require.NoError(t, os.Symlink(target, p))
			continue
		}
		if strings.HasSuffix(rel, "/") {
			require.NoError(t, os.MkdirAll(p, 0o755))
			continue
		}
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// gitInit makes dir a git repository (no commits: only .git's skeleton).
func gitInit(t *testing.T, dir string) {
	t.Helper()
	out, err := exec.Command("git", "init", "-q", dir).CombinedOutput()
	require.NoError(t, err, "git init: %s", out)
}

// lineOf repeats s n times, each followed by "\n".
func linesOf(s string, n int) string { return strings.Repeat(s+"\n", n) }

// compareOrderFree compares results where pi's output may depend on its walkers' order:
// when pi hit its limit or the 50KB cap, only the notices, the number of match lines
// and the limit details are compared; otherwise the output as a set, and the details.
func compareOrderFree(t *testing.T, pi, ours result.Result) {
	t.Helper()
	assert.Equal(t, pi.IsError, ours.IsError, "isError")
	piText, ourText := onlyText(t, pi), onlyText(t, ours)
	pd, _ := detailsValue(t, pi).(map[string]any)
	if pd == nil || (pd["matchLimitReached"] == nil && pd["resultLimitReached"] == nil && pd["truncation"] == nil) {
		assert.Equal(t, sortedBody(piText), sortedBody(ourText), "text")
		assert.Equal(t, detailsValue(t, pi), detailsValue(t, ours), "details")
		return
	}
	piBody, piNotice, _ := strings.Cut(piText, "\n\n[")
	ourBody, ourNotice, _ := strings.Cut(ourText, "\n\n[")
	assert.Equal(t, piNotice, ourNotice, "notice")
	od, _ := detailsValue(t, ours).(map[string]any)
	for _, k := range []string{"matchLimitReached", "resultLimitReached"} {
		assert.Equal(t, pd[k], od[k], k)
	}
	if pd["truncation"] == nil {
		assert.Equal(t, countMatchLines(piBody), countMatchLines(ourBody), "match lines")
	}
}
