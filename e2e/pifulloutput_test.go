//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPiFullOutputIsReadableInTheSandbox: the "Full output" file named in the model's
// context for a truncated `!seq 1 300000` (pi writes it on the host) and for a truncated
// bash tool result (written in the VM) both open with the model's sandboxed read tool.
// After pi is started again on the same session (-c: a new sandbox), the `!` command's
// file is there too; the bash tool's file of the first sandbox is not, and the model is
// told so instead of being sent to a path that fails.
func TestPiFullOutputIsReadableInTheSandbox(t *testing.T) {
	w := newWorld(t)
	read := []any{"read", map[string]any{"path": "@FULL_OUTPUT@", "offset": 299999, "limit": 2}}
	steps := func(s ...[]any) string {
		b, err := json.Marshal(s)
		require.NoError(t, err)
		return "PI_FAUX_STEPS=" + string(b)
	}
	home := t.TempDir()
	p := startTUIAt(t, w, w.ws, home, "", false, "sandbox: pi-sbx-",
		steps([]any{read}, []any{[]any{"bash", map[string]any{"command": "seq 1 300000 | sed s/^/b/"}}}, []any{read}))

	p.send(`!seq 1 300000`)
	p.expect("Full output: ", time.Minute) // the command has ended
	bang := regexp.MustCompile(`Full output: (\S+)`).FindStringSubmatch(p.screen)[1]
	p.send("go")
	p.expect("turn 1 done", 2*time.Minute)
	t.Logf("after the turn:\n%s", p.screen)
	require.Contains(t, p.screen, "read: 299999/300000/", "the `!` command's full output, read in the sandbox")
	require.Contains(t, p.screen, "read: b299999/b300000/", "the bash tool's full output, read in the sandbox")
	p.tmux("send-keys", "-t", "t", "C-d")
	p.expect("PI-EXIT=0", 30*time.Second)
	require.Eventually(t, func() bool { return len(w.sandboxes()) == 0 }, 30*time.Second, 100*time.Millisecond)

	// The same session in a new pi and a new sandbox: the `!` output is the last named.
	bashTool := "bash-tool-" + strconv.Itoa(os.Getpid())
	resume := func(tag, then string) *piTUI {
		return startTUIAt(t, w, w.ws, home, "-c", false, "sandbox: pi-sbx-", "PI_FAUX_TAG="+tag, steps(
			[]any{[]any{"bash", map[string]any{"command": "echo " + bashTool}}},
			[]any{[]any{"read", map[string]any{"path": then, "offset": 299999, "limit": 2}}}))
	}
	p = resume("resumed", bang)
	p.send("again")
	p.expect("turn 1 done resumed", 2*time.Minute)
	require.Contains(t, p.screen, "read resumed: 299999/300000/", "copied into the new sandbox:\n%s", p.screen)
	p.tmux("send-keys", "-t", "t", "C-d")
	p.expect("PI-EXIT=0", 30*time.Second)
	require.Eventually(t, func() bool { return len(w.sandboxes()) == 0 }, 30*time.Second, 100*time.Millisecond)

	// pi's host file gone (a reboot cleared /tmp): the message says so.
	require.NoError(t, os.Remove(bang))
	p = resume("gone", "@FULL_OUTPUT@")
	p.send("once more")
	p.expect("turn 1 done gone", 2*time.Minute)
	t.Logf("with the host file gone:\n%s", p.screen)
	// The last file named is the first run's bash tool's, in the first sandbox (the `!`
	// command's own note is in extension/test/fulloutput.test.ts).
	require.Contains(t, p.screen, "(written in an earlier sandbox", "the model is told the file is not there")
	p.tmux("send-keys", "-t", "t", "C-d")
	p.expect("PI-EXIT=0", 30*time.Second)
}
