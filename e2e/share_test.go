//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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

// hostGit runs git on the host in dir, as a user's editor would.
func hostGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@e", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1"}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// TestGitAcrossTheShareDoesNotPingPong: the host's git and the tools' git in the VM
// take turns on one repository. The VM's git finds the host-written index clean and
// leaves it alone (without its configuration it would find every entry changed by
// owner and rewrite the index, and the host's next status would do the same back); and
// git's racy-entry case still holds on both sides: a file changed in the same second as
// the index was written, to the same size, shows as modified.
func TestGitAcrossTheShareDoesNotPingPong(t *testing.T) {
	for _, share := range []string{"bind", "fuse"} {
		t.Run(share, func(t *testing.T) {
			w := newWorld(t)
			var env []string
			if share == "fuse" {
				env = shareEnv("auto")
			}
			cs, _, _ := w.serve(nil, nil, env...)
			// Old mtimes: nothing is racily clean, so a status has no reason to write.
			old := time.Now().Add(-time.Hour)
			require.NoError(t, filepath.WalkDir(w.ws, func(p string, _ os.DirEntry, err error) error {
				if err != nil {
					return err
				}
				return os.Chtimes(p, old, old)
			}))
			hostGit(t, w.ws, "init", "-q")
			hostGit(t, w.ws, "add", "-A")
			hostGit(t, w.ws, "commit", "-q", "-m", "fixture")
			hostGit(t, w.ws, "status", "--porcelain")
			index := filepath.Join(w.ws, ".git", "index")
			before, err := os.ReadFile(index)
			require.NoError(t, err)

			bash := func(command string) string {
				res := call(t, cs, "bash", fmt.Sprintf(`{"command":%q}`, command))
				require.False(t, res.IsError, "%s: %s", command, text(res))
				return strings.TrimPrefix(text(res), "(no output)") // pi's words for nothing printed
			}
			for round := range 3 {
				assert.Empty(t, strings.TrimSpace(bash("git status --porcelain")), "VM status, round %d", round)
				after, err := os.ReadFile(index)
				require.NoError(t, err)
				assert.Equal(t, before, after, "the VM's git status rewrote the host's index (round %d)", round)
				assert.Empty(t, strings.TrimSpace(hostGit(t, w.ws, "status", "--porcelain")), "host status, round %d", round)
			}
			// What the configuration prevents: git's defaults in the VM rewrite the index.
			bash("env -u GIT_CONFIG_COUNT git status --porcelain")
			defaults, _ := os.ReadFile(index)
			assert.NotEqual(t, before, defaults, "git's defaults in the VM should have rewritten the host's index (the case this guards)")
			hostGit(t, w.ws, "status", "--porcelain")

			// Racy entries: written, then changed to the same size within the second.
			// (Touched first, so the refresh writes the index now, in this second.)
			got := bash("touch edit-me.txt; git update-index --refresh >/dev/null; printf 'ALPHA\\nbeta\\ngamma\\n' > edit-me.txt; git status --porcelain edit-me.txt")
			assert.Contains(t, got, " M edit-me.txt", "VM: a same-second, same-size change")
			bash("git checkout -q -- edit-me.txt")
			now := time.Now()
			require.NoError(t, os.Chtimes(filepath.Join(w.ws, "edit-me.txt"), now, now))
			hostGit(t, w.ws, "update-index", "--refresh")
			require.NoError(t, os.WriteFile(filepath.Join(w.ws, "edit-me.txt"), []byte("alpha\nBETA\ngamma\n"), 0o644))
			assert.Contains(t, hostGit(t, w.ws, "status", "--porcelain", "edit-me.txt"), " M edit-me.txt", "host: a same-second, same-size change")
			assert.Contains(t, bash("git status --porcelain edit-me.txt"), " M edit-me.txt", "VM sees the host's same-size change")
		})
	}
}
