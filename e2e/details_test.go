//go:build e2e

package e2e

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withDetails are serve's arguments for tests that compare results with tool --local's,
// pi's details included: serve leaves them out unless asked.
var withDetails = []string{"--details", "structured"}

// longFile writes a file pi's read truncates (more than its 2000 lines), so that the
// result has details: the truncation record.
func longFile(t testing.TB, dir string) string {
	t.Helper()
	var b strings.Builder
	for i := range 3000 {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\n")
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "long.txt"), []byte(b.String()), 0o644))
	return `{"path":"long.txt"}`
}

// TestServeDetailsOnlyWhenAsked: a plain `serve`, the obvious configuration of any MCP
// client, answers a truncated read with its content and no structuredContent (which
// Claude Code and Codex would show the model instead of the file); --details structured
// or PI_SBX_DETAILS=structured, as the pi package asks, adds pi's details.
func TestServeDetailsOnlyWhenAsked(t *testing.T) {
	w := newWorld(t)
	args := longFile(t, w.ws)
	var local struct {
		Content json.RawMessage `json:"content"`
		Details map[string]any  `json:"details"`
	}
	require.NoError(t, json.Unmarshal([]byte(w.local("read", args)), &local))
	require.Contains(t, local.Details, "truncation", "pi's read of the file has details")
	wantDetails, _ := json.Marshal(local.Details)

	for _, tc := range []struct {
		name    string
		args    []string
		env     []string
		details bool
	}{
		{name: "plain"},
		{name: "none", args: []string{"--details", "none"}, env: []string{"PI_SBX_DETAILS=structured"}},
		{name: "flag", args: withDetails, details: true},
		{name: "env", env: []string{"PI_SBX_DETAILS=structured"}, details: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, _, _ := w.serve(nil, tc.args, tc.env...)
			res := call(t, cs, "read", args)
			require.False(t, res.IsError, text(res))
			content, _ := json.Marshal(res.Content)
			assert.JSONEq(t, string(local.Content), string(content), "the content is pi's either way")
			if !tc.details {
				assert.Empty(t, detailKeys(res.StructuredContent), "no details for a client that would show them to the model")
				return
			}
			got, _ := json.Marshal(res.StructuredContent)
			assert.JSONEq(t, string(wantDetails), string(got))
		})
	}
}

// detailKeys names a result's structuredContent members (a failure message that lists
// them, not a truncation record of 2000 lines).
func detailKeys(sc any) []string {
	if sc == nil {
		return nil
	}
	m, ok := sc.(map[string]any)
	if !ok {
		return []string{"(not an object)"}
	}
	return slices.Sorted(maps.Keys(m))
}
