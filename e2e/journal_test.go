//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sumsScript prints a checksum of every file of the workspace but the .git directory,
// in path order: the state a test compares.
const sumsScript = `find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 sha256sum`

// TestJournalCallsAndUndo: in review mode (git and non-git workspaces), six calls of a
// serve client that change files — each with its own id — and two that change nothing
// (a read, a bash that only reads) are six checkpoints; review --calls lists them with
// the client and ids, review N shows that call's diff and A..B their net change; undo
// --last 2 restores exactly the files after call 4, and undo --last 1 takes that undo
// back; the host workspace is not touched by any of it. land --calls A..B then lands
// exactly those calls' net change, refusing (writing nothing) a file an earlier call
// changed that is not landed, and a file changed on the host, by name.
func TestJournalCallsAndUndo(t *testing.T) {
	for _, tc := range []struct {
		name string
		git  bool
	}{{"git", true}, {"plain", false}} {
		t.Run(tc.name, func(t *testing.T) {
			w, state := reviewWorld(t, tc.git)
			before := treeSums(t, w.ws)
			cs, _, stderr := w.serve(nil, []string{"--tools", "+terminal"}, "DOCKER_SANDBOX_WORKSPACE_MODE=review", "XDG_STATE_HOME="+state, "DOCKER_SANDBOX_GC_HOURS=0")
			callID := func(id, tool, args string) string {
				t.Helper()
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args), Meta: mcp.Meta{"pi-sbx/callId": id}})
				require.NoError(t, err, "%s %s", tool, args)
				require.False(t, res.IsError, "%s: %s\n%s", tool, text(res), stderr.String())
				return text(res)
			}
			sums := func() string { return callID("sums", "bash", bashArgs(sumsScript)) }
			callID("c1", "write", `{"path":"j/one.txt","content":"one\n"}`)
			callID("c2", "edit", `{"path":"j/one.txt","edits":[{"oldText":"one","newText":"one, edited"}]}`)
			callID("r1", "read", `{"path":"j/one.txt"}`)
			callID("c3", "bash", bashArgs("printf 'two\\nlines\\n' > j/two.txt && rm src/main.go"))
			callID("c4", "write", `{"path":"README.md","content":"replaced\n"}`)
			after4 := sums()
			callID("c5", "bash", bashArgs("echo more >> j/two.txt && mkdir -p k && echo k > k/k.txt"))
			callID("c6", "write", `{"path":"j/one.txt","content":"six\n"}`)
			after6 := sums()
			// A hook planted in the sandbox's own .git: no checkpoint (never the journal's),
			// but review flags it.
			callID("hook", "bash", bashArgs("mkdir -p .git/hooks && printf '#!/bin/sh\\necho owned\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit"))
			name := w.sandboxes()[0]
			assert.Contains(t, after6, "j/one.txt")

			cli := func(args ...string) string {
				t.Helper()
				c := command(backendBin, w.env("XDG_STATE_HOME="+state, "DOCKER_SANDBOX="+name), args...)
				c.Dir = w.ws
				out, err := c.CombinedOutput()
				require.NoError(t, err, "%v: %s", args, out)
				return string(out)
			}
			lines := strings.Split(strings.TrimSpace(cli("review", "--calls")), "\n")
			require.Len(t, lines, 6, "six changing calls, the read and the sums none:\n%s", strings.Join(lines, "\n"))
			for i, want := range []string{
				`^1 +e2e +c1 +write +content="4 bytes" path="j/one.txt"  1 file\(s\) \+1 -0$`,
				`^2 +e2e +c2 +edit +edits="1" path="j/one.txt"  1 file\(s\) \+1 -1$`,
				`^3 +e2e +c3 +bash +command=.*  2 file\(s\) `,
				`^4 +e2e +c4 +write .*  1 file\(s\) `,
				`^5 +e2e +c5 +bash .*  2 file\(s\) \+2 -0$`,
				`^6 +e2e +c6 +write .*  1 file\(s\) \+1 -1$`,
			} {
				assert.Regexp(t, regexp.MustCompile(want), lines[i])
			}
			// serve's pi_sbx_calls is the same journal, as data for a client.
			callsRes, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "pi_sbx_calls", Arguments: map[string]any{}})
			require.NoError(t, err)
			require.False(t, callsRes.IsError, text(callsRes))
			assert.Equal(t, cli("review", "--calls"), text(callsRes), "the text is review --calls's")
			var listed struct {
				At    int `json:"at"`
				Calls []struct {
					N      int    `json:"n"`
					CallID string `json:"call_id"`
					Tool   string `json:"tool"`
					Files  int    `json:"files"`
				} `json:"calls"`
			}
			b, err := json.Marshal(callsRes.StructuredContent)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &listed))
			assert.Equal(t, 6, listed.At)
			require.Len(t, listed.Calls, 6)
			for i, c := range listed.Calls {
				assert.Equal(t, i+1, c.N)
				assert.Equal(t, "c"+strconv.Itoa(i+1), c.CallID)
			}
			assert.Equal(t, 2, listed.Calls[2].Files, "call 3 wrote j/two.txt and removed src/main.go")
			// A command left running in the workspace: no checkpoint, named by undo.
			assert.Contains(t, callID("t1", "exec_command", `{"cmd":"exec sleep 300","yield_time_ms":300}`), "session")
			stat := cli("review", "--stat")
			assert.Regexp(t, `In the sandbox's own \.git: would run on the host, never landed \(1\)\n  ! \.git/hooks/pre-commit: `, stat)
			two := cli("review", "2")
			assert.Contains(t, two, "-one\n+one, edited\n", "review N is that call's diff")
			assert.NotContains(t, two, "README.md")
			span := cli("review", "--stat", "1..3")
			assert.Contains(t, span, "j/one.txt")
			assert.Contains(t, span, "j/two.txt")
			assert.Contains(t, span, "src/main.go")
			assert.NotContains(t, span, "README.md", "the net change of calls 1 to 3 only")

			undo := func(args string) (string, map[string]any) {
				t.Helper()
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "pi_sbx_undo", Arguments: json.RawMessage(args)})
				require.NoError(t, err)
				require.False(t, res.IsError, text(res))
				return text(res), res.StructuredContent.(map[string]any)
			}
			out, dry := undo(`{"last":2,"dry_run":true}`)
			assert.Regexp(t, `warning: process \d+ \(sleep\) holds `+regexp.QuoteMeta(w.ws), out, "serve's dry run names the running command")
			assert.Contains(t, out, "would reset the workspace of "+name+" to checkpoint 4 (after write c4)")
			assert.Equal(t, false, dry["done"])
			assert.Equal(t, after6, sums(), "a dry run changes nothing")
			out = cli("undo", "--last", "2")
			assert.Contains(t, out, "to checkpoint 4")
			assert.Regexp(t, `warning: process \d+ \(sleep\) holds `+regexp.QuoteMeta(w.ws), out, "the running command is named")
			assert.Equal(t, after4, sums(), "undo --last 2: exactly the files after call 4")
			// The undo undone through serve's pi_sbx_undo, as pi's /sandbox undo does it.
			out, done := undo(`{"last":1}`)
			assert.Contains(t, out, "to checkpoint 6")
			assert.Equal(t, true, done["done"])
			assert.Equal(t, after6, sums(), "the undo undone")
			out = cli("undo", "--to", "0")
			assert.NotContains(t, sums(), "j/one.txt", "back to the start")
			lines = strings.Split(strings.TrimSpace(cli("review", "--calls")), "\n")
			require.Len(t, lines, 9, "each undo is a checkpoint:\n%s", strings.Join(lines, "\n"))
			assert.Regexp(t, `^7 +pi-sbx-backend undo +- +undo +to="4"`, lines[6])
			changed := diffSums(before, treeSums(t, w.ws)) // before any land
			if tc.git {
				assert.Equal(t, []string{".git/config"}, changed, "nothing of the host's changed but sbx's remote")
			} else {
				assert.Empty(t, changed, "the host workspace is not touched")
			}

			// A human's shell is a client too: what it changed is its checkpoint.
			sh := command(backendBin, w.env("XDG_STATE_HOME="+state, "DOCKER_SANDBOX="+name, "DOCKER_SANDBOX_WORKSPACE_MODE=review"), "shell", "--", "sh", "-c", "echo s > shell.txt")
			sh.Dir = w.ws
			b, err = sh.CombinedOutput()
			require.NoError(t, err, "%s", b)
			lines = strings.Split(strings.TrimSpace(cli("review", "--calls")), "\n")
			assert.Regexp(t, `^10 +shell +- +shell +command="sh -c echo s > shell.txt"  1 file\(s\) \+1 -0$`, lines[len(lines)-1])

			// land --calls: the net change of those calls, all or nothing.
			fail := func(args ...string) string {
				t.Helper()
				c := command(backendBin, w.env("XDG_STATE_HOME="+state, "DOCKER_SANDBOX="+name), args...)
				c.Dir = w.ws
				out, err := c.CombinedOutput()
				var ee *exec.ExitError
				require.ErrorAs(t, err, &ee, "%v: %s", args, out)
				assert.Equal(t, 1, ee.ExitCode(), "%v: %s", args, out)
				return string(out)
			}
			hostBefore := treeSums(t, w.ws)
			out = fail("land", "--calls", "5")
			assert.Contains(t, out, `j/two.txt: changed by a call before 5 that is not landed`)
			assert.Empty(t, diffSums(hostBefore, treeSums(t, w.ws)), "a refused land writes nothing")
			out = cli("land", "--calls", "1..3")
			assert.Contains(t, out, "landed 3 change(s)")
			readHost := func(p string) string {
				b, err := os.ReadFile(filepath.Join(w.ws, p))
				if err != nil {
					return "(none)"
				}
				return string(b)
			}
			assert.Equal(t, "one, edited\n", readHost("j/one.txt"), "call 2's edit: the net change of 1..3")
			assert.Equal(t, "two\nlines\n", readHost("j/two.txt"))
			assert.Equal(t, "(none)", readHost("src/main.go"))
			assert.NotEqual(t, "replaced\n", readHost("README.md"), "call 4 is not landed")
			require.NoError(t, os.WriteFile(filepath.Join(w.ws, "README.md"), []byte("host edit\n"), 0o644))
			out = fail("land", "--calls", "4")
			assert.Contains(t, out, "README.md")
			assert.Equal(t, "host edit\n", readHost("README.md"), "a host-changed file is refused by name")
			out = cli("land", "--calls", "5..6")
			assert.Equal(t, "two\nlines\nmore\n", readHost("j/two.txt"))
			assert.Equal(t, "k\n", readHost("k/k.txt"))
			assert.Equal(t, "six\n", readHost("j/one.txt"))

			// The journal outlives the sandbox.
			calls := cli("review", "--calls")
			_, code := w.sim("rm", "--force", name)
			require.Zero(t, code)
			assert.Equal(t, calls, cli("review", "--calls"))
			assert.Contains(t, cli("review", "2"), "-one\n+one, edited\n")

			// A usage error is one line (and the hint), exit 2.
			c := command(backendBin, w.env("XDG_STATE_HOME="+state, "DOCKER_SANDBOX="+name), "undo", "--to", "99")
			c.Dir = w.ws
			b, err = c.CombinedOutput()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, 2, ee.ExitCode())
			assert.Equal(t, "pi-sbx-backend undo: --to 99: the journal has checkpoints 0 to 10\nRun 'pi-sbx-backend undo --help' for usage.\n", string(b))
		})
	}
}

// TestJournalFollowsTheSandbox: in review mode over a workspace that is not a git
// repository, a file the host changes under the overlay while the sandbox works is not
// recorded as a change of the next call: that call's checkpoint holds what the sandbox
// changed. (The journal tells which call changed what; the host's edit is no call's.)
func TestJournalFollowsTheSandbox(t *testing.T) {
	w, state := reviewWorld(t, false)
	cs, _, stderr := w.serve(nil, nil, "DOCKER_SANDBOX_WORKSPACE_MODE=review", "XDG_STATE_HOME="+state, "DOCKER_SANDBOX_GC_HOURS=0")
	callID := func(id, tool, args string) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args), Meta: mcp.Meta{"pi-sbx/callId": id}})
		require.NoError(t, err, "%s %s", tool, args)
		require.False(t, res.IsError, "%s: %s\n%s", tool, text(res), stderr.String())
	}
	callID("c1", "write", `{"path":"mine.txt","content":"one\n"}`)
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "README.md"), []byte("edited on the host\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "host-new.txt"), []byte("made on the host\n"), 0o644))
	callID("c2", "bash", bashArgs("echo two > two.txt"))

	name := w.sandboxes()[0]
	c := command(backendBin, w.env("XDG_STATE_HOME="+state, "DOCKER_SANDBOX="+name), "review", "--stat", "2")
	c.Dir = w.ws
	out, err := c.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "two.txt")
	assert.NotContains(t, string(out), "README.md", "the host's edit is not call 2's")
	assert.NotContains(t, string(out), "host-new.txt", "the host's new file is not call 2's")
}
