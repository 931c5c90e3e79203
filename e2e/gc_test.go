//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ownerRecord writes the project's owner record of a sandbox, as serve does when it
// creates one.
func (w *world) ownerRecord(t *testing.T, name string, pid int, pinned bool, age time.Duration) {
	dir := filepath.Join(w.stateHome(), "pi-sbx-backend", "owners")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	rec, err := json.Marshal(map[string]any{"name": name, "pid": pid, "created": time.Now().Add(-age).UTC(), "pinned": pinned})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".json"), rec, 0o600))
}

func deadPid(t *testing.T) int {
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	return cmd.Process.Pid
}

// stale makes a stopped pi-sbx sandbox whose owner is gone, created two days ago.
func (w *world) stale(t *testing.T, name string) {
	w.create(name)
	out, code := w.sim("stop", name)
	require.Zero(t, code, out)
	w.ownerRecord(t, name, deadPid(t), false, 48*time.Hour)
}

// TestGCRemovesOnlyWhatItShould: docker_gc, `pi-sbx-backend gc` and the sweep at session
// start remove stopped pi-sbx-* sandboxes whose owner record proves the owner gone and
// that are old enough — and nothing else: running, young, pinned, unrecorded and
// foreign sandboxes stay.
func TestGCRemovesOnlyWhatItShould(t *testing.T) {
	w := newWorld(t)
	dead := deadPid(t)
	w.stale(t, "pi-sbx-1-old")
	w.create("pi-sbx-2-running")
	w.ownerRecord(t, "pi-sbx-2-running", dead, false, 48*time.Hour)
	w.create("pi-sbx-3-norecord")
	w.sim("stop", "pi-sbx-3-norecord")
	w.create("pi-sbx-4-young")
	w.sim("stop", "pi-sbx-4-young")
	w.ownerRecord(t, "pi-sbx-4-young", dead, false, time.Hour)
	w.create("pi-sbx-5-pinned")
	w.sim("stop", "pi-sbx-5-pinned")
	w.ownerRecord(t, "pi-sbx-5-pinned", dead, true, 48*time.Hour)
	w.create("other-old")
	w.sim("stop", "other-old")
	w.ownerRecord(t, "other-old", dead, false, 48*time.Hour)
	w.create("pi-sbx-7-alive")
	w.sim("stop", "pi-sbx-7-alive")
	w.ownerRecord(t, "pi-sbx-7-alive", os.Getpid(), false, 48*time.Hour)
	keep := []string{"pi-sbx-2-running", "pi-sbx-3-norecord", "pi-sbx-4-young", "pi-sbx-5-pinned", "other-old", "pi-sbx-7-alive"}
	env := w.env("XDG_STATE_HOME="+w.stateHome(), "DOCKER_SANDBOX_GC_HOURS=0")

	// The command line: a dry run says what would go and removes nothing.
	cmd := command(backendBin, env, "gc", "--dry-run")
	out, err := cmd.Output()
	require.NoError(t, err, stderrOf(err))
	assert.Contains(t, string(out), "would remove  pi-sbx-1-old")
	assert.Contains(t, w.sandboxes(), "pi-sbx-1-old")

	// docker_gc through serve (no startup sweep: DOCKER_SANDBOX_GC_HOURS=0).
	cs, _, _ := w.serve(nil, nil, "XDG_STATE_HOME="+w.stateHome(), "DOCKER_SANDBOX_GC_HOURS=0")
	res := tool(t, cs, "docker_gc", map[string]any{"hours": 24}, false)
	assert.Contains(t, res, "removed       pi-sbx-1-old")
	for _, why := range []string{"pi-sbx-2-running (running): running", "pi-sbx-3-norecord (stopped): no owner record",
		"pi-sbx-4-young (stopped): only", "pi-sbx-5-pinned (stopped): pinned", "other-old (stopped): not a pi-sbx sandbox",
		"pi-sbx-7-alive (stopped): owner pid"} {
		assert.Contains(t, res, "kept          "+why)
	}
	assert.NotContains(t, w.sandboxes(), "pi-sbx-1-old")
	assert.Subset(t, w.sandboxes(), keep)

	// `gc` for real, and the sweep when a session starts (default 24 h).
	w.stale(t, "pi-sbx-8-old")
	cmd = command(backendBin, w.env("XDG_STATE_HOME="+w.stateHome()), "gc")
	out, err = cmd.Output()
	require.NoError(t, err, stderrOf(err))
	assert.Contains(t, string(out), "removed       pi-sbx-8-old")
	w.stale(t, "pi-sbx-9-old")
	w.serve(nil, nil, "XDG_STATE_HOME="+w.stateHome())
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && contains(w.sandboxes(), "pi-sbx-9-old") {
		time.Sleep(100 * time.Millisecond)
	}
	assert.NotContains(t, w.sandboxes(), "pi-sbx-9-old", "the sweep at session start")
	assert.Subset(t, w.sandboxes(), keep)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestVerifyCommand: `pi-sbx-backend verify` exits 0 when every check passes (on a session
// sandbox it creates and removes), and 1 when one fails.
func TestVerifyCommand(t *testing.T) {
	w := newWorld(t)
	env := w.env(w.deployEnv(t)...)
	cmd := command(backendBin, env, "verify", "--workspace", w.ws)
	out, err := cmd.Output()
	require.NoError(t, err, "%s\n%s", out, stderrOf(err))
	assert.Contains(t, string(out), "All 11 checks passed")
	assert.Empty(t, w.sandboxes(), "the audit's session sandbox is removed")

	// A pinned sandbox with a docker context pointing elsewhere: contexts fails.
	simEnv := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "SBXSIM_STATE=" + w.state}
	c := command(simBin, append(simEnv, "SBXSIM_DOCKER=1"), "create", "--name", "pinned-box", "shell", w.ws)
	require.NoError(t, c.Run())
	c = command(simBin, simEnv, "exec", "pinned-box", "--", "docker", "context", "create", "elsewhere", "--docker", "host=tcp://10.9.9.9:2375")
	cout, err := c.CombinedOutput()
	require.NoError(t, err, string(cout))
	cmd = command(backendBin, append(env, "DOCKER_SANDBOX=pinned-box"), "verify", "--workspace", w.ws)
	out, err = cmd.Output()
	assert.Equal(t, 1, exitCode(err), "%s", out)
	assert.Contains(t, string(out), "contexts        FAIL")
	assert.True(t, strings.Contains(string(out), "FAILED: contexts."), "%s", out)
	assert.Contains(t, w.sandboxes(), "pinned-box", "a pinned sandbox is kept")
}
