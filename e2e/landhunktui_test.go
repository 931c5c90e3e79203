//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPiLandHunksTUI: in pi's TUI, /sandbox land PATH --hunk shows the file's hunks one
// by one in pi's selector; y, n, y then a yes to the confirmation lands hunks 1 and 3,
// and the host's file is the start's with those two alone.
func TestPiLandHunksTUI(t *testing.T) {
	w := newWorld(t)
	start := hunkFile(40, nil)
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "nums.txt"), []byte(start), 0o644))
	gitIn(t, w.ws, "init", "-q")
	gitIn(t, w.ws, "add", "-A")
	gitIn(t, w.ws, "commit", "-q", "-m", "fixture")
	state := t.TempDir()
	edits := map[int]string{3: "three\n", 20: "twenty\n", 38: "thirty-eight\n"}
	calls, err := json.Marshal([]any{[]any{"write", map[string]string{"path": "nums.txt", "content": hunkFile(40, edits)}}})
	require.NoError(t, err)
	p := startPiTUIWith(t, w, w.ws, "(review", "DOCKER_SANDBOX_WORKSPACE_MODE=review", "XDG_STATE_HOME="+state,
		"DOCKER_SANDBOX_ENV_ALLOWLIST=SBXSIM_STATE,SBXSIM_DOCKER,XDG_STATE_HOME", "PI_FAUX_CALLS="+string(calls))
	p.expect("review: 0 files changed", 30*time.Second)
	p.send("go")
	p.expect("turn 1 done", time.Minute)
	p.expect("review: 1 file changed", time.Minute)

	p.send("/sandbox land nums.txt --hunk")
	p.expect("Land hunk 1 of 3 of nums.txt (+1 -1)?", 30*time.Second)
	assert.Contains(t, p.screen, "+three")
	t.Logf("the picker:\n%s", p.screen)
	p.tmux("send-keys", "-t", "t", "Enter") // y
	p.expect("Land hunk 2 of 3 of nums.txt", 10*time.Second)
	p.tmux("send-keys", "-t", "t", "Down")
	p.tmux("send-keys", "-t", "t", "Enter") // n
	p.expect("Land hunk 3 of 3 of nums.txt", 10*time.Second)
	p.tmux("send-keys", "-t", "t", "Enter") // y
	p.expect("Land hunks 1, 3 of nums.txt into "+w.ws+"?", 10*time.Second)
	t.Logf("the confirmation:\n%s", p.screen)
	p.tmux("send-keys", "-t", "t", "Enter") // Yes
	p.expect("landed 2 hunk(s) of nums.txt; 1 of its hunks left", 30*time.Second)
	b, err := os.ReadFile(filepath.Join(w.ws, "nums.txt"))
	require.NoError(t, err)
	assert.Equal(t, hunkFile(40, map[int]string{3: "three\n", 38: "thirty-eight\n"}), string(b))
	p.expect("review: 1 file changed", 10*time.Second) // hunk 2 is left
	p.tmux("send-keys", "-t", "t", "C-d")
	p.expect("PI-EXIT=0", 30*time.Second)
}
