//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// shareEnv makes serve's sandboxes get the workspace over sbxsim's virtiofs-shaped FUSE
// share with the given cache mode.
func shareEnv(cache string, extra ...string) []string {
	return append([]string{"SBXSIM_SHARE=fuse", "SBXSIM_SHARE_CACHE=" + cache,
		"DOCKER_SANDBOX_ENV_ALLOWLIST=SBXSIM_STATE,SBXSIM_DOCKER,SBXSIM_SHARE,SBXSIM_SHARE_CACHE,SBXSIM_SHARE_LATENCY"}, extra...)
}

// shareRaceRounds is how many rounds TestShareCacheNeverRevertsHostChanges plays.
const shareRaceRounds = 200

// TestShareCacheNeverRevertsHostChanges: over a cached share (the default of a Mac's
// sbx), the user's editor changes a file on the host and the agent edits it at once,
// round after round. Every round the host's change is kept next to the agent's edit
// (the edit applied to the newest content), a read right after the host's change
// returns it, and a write over a file the host changed leaves exactly the written
// content. Without reading around the guest's cache, the edit rewrites the stale copy
// it read and the host's change is silently reverted.
func TestShareCacheNeverRevertsHostChanges(t *testing.T) {
	for _, cache := range []string{"auto", "always"} {
		t.Run(cache, func(t *testing.T) {
			w := newWorld(t)
			cs, _, stderr := w.serve(nil, nil, shareEnv(cache)...)
			p := filepath.Join(w.ws, "race.txt")
			hostLine := func(i int) string { return fmt.Sprintf("host change %d", i) }
			require.NoError(t, os.WriteFile(p, []byte(hostLine(0)+"\nagent edit 0\n"), 0o644))
			var reverted, staleReads, failedEdits, badWrites int
			for i := 1; i <= shareRaceRounds; i++ {
				// The agent has the file in its cache...
				call(t, cs, "read", `{"path":"race.txt"}`)
				// ...the user's editor changes it on the host (the new line is longer, so
				// a stale size shows too)...
				agentLine := fmt.Sprintf("agent edit %d", i-1)
				require.NoError(t, os.WriteFile(p, []byte(hostLine(i)+" by the editor\n"+agentLine+"\n"), 0o644))
				// ...and the agent edits its own line at once.
				res := call(t, cs, "edit", fmt.Sprintf(`{"path":"race.txt","edits":[{"oldText":%q,"newText":"agent edit %d"}]}`, agentLine, i))
				if res.IsError {
					if failedEdits == 0 {
						t.Logf("first refused edit: %s", text(res))
					}
					failedEdits++ // pi's own refusal: acceptable, the host's change is kept
				}
				got, err := os.ReadFile(p)
				require.NoError(t, err)
				if !strings.Contains(string(got), hostLine(i)+" by the editor\n") {
					reverted++
				}
				// A read right after a host change returns it (the file cached first).
				call(t, cs, "read", `{"path":"race.txt"}`)
				call(t, cs, "read", `{"path":"race.txt"}`)
				require.NoError(t, os.WriteFile(p, []byte(hostLine(i)+" by the editor\nagent edit "+fmt.Sprint(i)+"\nread check "+fmt.Sprint(i)+"\n"), 0o644))
				if r := text(call(t, cs, "read", `{"path":"race.txt"}`)); !strings.Contains(r, fmt.Sprintf("read check %d\n", i)) {
					staleReads++
				}
				// A write over a file the host changed leaves the written content.
				if i%10 == 0 {
					require.NoError(t, os.WriteFile(p, []byte("host wrote this, longer than the agent's\n"), 0o644))
					call(t, cs, "write", `{"path":"race.txt","content":"agent wrote\n"}`)
					if got, _ := os.ReadFile(p); string(got) != "agent wrote\n" {
						badWrites++
					}
					require.NoError(t, os.WriteFile(p, []byte(hostLine(i)+" by the editor\nagent edit "+fmt.Sprint(i)+"\n"), 0o644))
				}
			}
			t.Logf("cache %s: %d rounds, host changes reverted by an edit: %d, edits refused: %d, stale reads: %d, bad writes: %d of %d",
				cache, shareRaceRounds, reverted, failedEdits, staleReads, badWrites, shareRaceRounds/10)
			require.Zero(t, reverted, "host changes reverted by the agent's edit; serve stderr:\n%s", stderr)
			require.Zero(t, staleReads, "reads that missed the host's change")
			require.Zero(t, badWrites, "writes that did not leave exactly the written content")
		})
	}
}
