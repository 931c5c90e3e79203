//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hunkFile is a file of n numbered lines with the lines of edits replaced.
func hunkFile(n int, edits map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if e, ok := edits[i]; ok {
			b.WriteString(e)
			continue
		}
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

// TestLandHunks: in review mode (git and plain workspaces) a file the sandbox changed in
// three places far apart is reviewed as three numbered hunks; land PATH --hunk 1,3
// writes the host's file as it was with only those two, and the next review shows the
// other, numbered 1 and still landable. Bad lists, numbers out of range, a new file, and
// a host edit since the start are refused on one line, writing nothing.
func TestLandHunks(t *testing.T) {
	for _, tc := range []struct {
		name string
		git  bool
	}{{"git", true}, {"plain", false}} {
		t.Run(tc.name, func(t *testing.T) {
			w, state := reviewWorld(t, tc.git)
			start := hunkFile(40, nil)
			require.NoError(t, os.WriteFile(filepath.Join(w.ws, "nums.txt"), []byte(start), 0o644))
			if tc.git {
				gitIn(t, w.ws, "add", "nums.txt")
				gitIn(t, w.ws, "commit", "-q", "-m", "nums")
			}
			cs, _, stderr := w.serve(nil, nil, "DOCKER_SANDBOX_WORKSPACE_MODE=review", "XDG_STATE_HOME="+state, "DOCKER_SANDBOX_GC_HOURS=0")
			edits := map[int]string{3: "three\n", 20: "20\ntwenty and a half\n", 38: "thirty-eight\n"}
			content, err := json.Marshal(hunkFile(40, edits))
			require.NoError(t, err)
			for _, args := range []string{`{"path":"nums.txt","content":` + string(content) + `}`, `{"path":"fresh.txt","content":"new\n"}`} {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write", Arguments: json.RawMessage(args)})
				require.NoError(t, err)
				require.False(t, res.IsError, "%s\n%s", text(res), stderr.String())
			}
			name := w.sandboxes()[0]
			run := func(args ...string) (string, int) {
				t.Helper()
				c := command(backendBin, w.env("XDG_STATE_HOME="+state, "DOCKER_SANDBOX="+name), args...)
				c.Dir = w.ws
				out, err := c.CombinedOutput()
				var ee *exec.ExitError
				if err != nil {
					require.ErrorAs(t, err, &ee, "%v: %s", args, out)
					return string(out), ee.ExitCode()
				}
				return string(out), 0
			}
			readHost := func() string {
				b, err := os.ReadFile(filepath.Join(w.ws, "nums.txt"))
				require.NoError(t, err)
				return string(b)
			}

			out, code := run("review", "nums.txt")
			require.Zero(t, code, out)
			for n := 1; n <= 3; n++ {
				assert.Regexp(t, fmt.Sprintf(`(?m)^@@ -\d+,\d+ \+\d+,\d+ @@ \[hunk %d\]`, n), out)
			}
			out, _ = run("review", "fresh.txt")
			assert.NotContains(t, out, "[hunk", "a new file lands whole: no numbers")

			// Refused, writing nothing: each on one line.
			hostBefore := treeSums(t, w.ws)
			for _, bad := range []struct {
				args []string
				code int
				msg  string
			}{
				{[]string{"land", "nums.txt", "--hunk", "4"}, 1, "pi-sbx-backend land: nums.txt has 3 hunk(s): there is no hunk 4\n"},
				{[]string{"land", "nums.txt", "--hunk", "1,1"}, 2, `pi-sbx-backend land: --hunk: hunk list "1,1": hunk 1 is named twice` + "\n"},
				{[]string{"land", "nums.txt", "--hunk", "x"}, 2, `pi-sbx-backend land: --hunk: hunk list "x": "x" is not a hunk number or a range N-M` + "\n"},
				{[]string{"land", "nums.txt", "fresh.txt", "--hunk", "1"}, 2, "pi-sbx-backend land: --hunk lands hunks of one file: name exactly that PATH, without --all\n"},
				{[]string{"land", "fresh.txt", "--hunk", "1"}, 1, "pi-sbx-backend land: fresh.txt is a new file: land it whole, without hunks\n"},
			} {
				out, code := run(bad.args...)
				assert.Equal(t, bad.code, code, "%v: %s", bad.args, out)
				assert.True(t, strings.HasPrefix(out, bad.msg), "%v:\n%s", bad.args, out)
			}
			require.NoError(t, os.WriteFile(filepath.Join(w.ws, "nums.txt"), []byte(start+"host\n"), 0o644))
			out, code = run("land", "nums.txt", "--hunk", "1")
			assert.Equal(t, 1, code)
			assert.Equal(t, "pi-sbx-backend land: nothing landed: nums.txt: changed on the host since the sandbox started\n", out)
			require.NoError(t, os.WriteFile(filepath.Join(w.ws, "nums.txt"), []byte(start), 0o644))
			assert.Empty(t, diffSums(hostBefore, treeSums(t, w.ws)), "nothing written by the refused lands")

			out, code = run("land", "nums.txt", "--hunk", "1,3")
			require.Zero(t, code, out)
			assert.Contains(t, out, "landed hunks 1, 3 of nums.txt; 1 of its hunks left\n")
			assert.Equal(t, hunkFile(40, map[int]string{3: "three\n", 38: "thirty-eight\n"}), readHost())

			out, _ = run("review", "nums.txt")
			assert.Contains(t, out, "@@ [hunk 1]")
			assert.NotContains(t, out, "[hunk 2]")
			assert.Contains(t, out, "+twenty and a half\n")
			assert.NotContains(t, out, "+three\n", "landed hunks no longer show")
			out, _ = run("review", "--stat")
			assert.Contains(t, out, "M    nums.txt  (+1 -0)")

			out, code = run("land", "--hunk=1", "nums.txt")
			require.Zero(t, code, out)
			assert.Equal(t, hunkFile(40, edits), readHost())
			out, _ = run("review", "--stat")
			assert.NotContains(t, out, "nums.txt")
			assert.Contains(t, out, "fresh.txt")
		})
	}
}
