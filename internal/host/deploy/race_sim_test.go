//go:build e2e

package deploy

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
)

// TestRunVolumeRaceCannotWin: a container that can write the workspace flips a directory
// to a link to the sandbox's /var/run (the daemon's socket) and back in a loop,
// while docker_run binds that directory again and again. The source is resolved in the
// sandbox with every writer paused until the container has started, so no run ever
// mounts /var/run. (Before, the check ran on the host and nothing was paused: 2 of 40
// calls got the socket.)
func TestRunVolumeRaceCannotWin(t *testing.T) {
	w := newSimWorld(t)
	const sandbox = "deploy-race"
	w.create(sandbox)
	d := w.deployer(sandbox, w.environ())
	out, isErr := callText(t, d, "docker_run", map[string]any{"image": "busybox:latest", "name": "flipper", "volumes": []string{".:/w"},
		"command": []string{"sh", "-c", "cd /w; mkdir -p d.real; while :; do mv d.real d; usleep 60000; mv d d.real; ln -s /var/run d; usleep 20000; rm d; done"}})
	require.False(t, isErr, out)

	// The directory is there three quarters of the time, so that most calls run and
	// "no run got the socket" is not said of runs that were all refused (with it there
	// half the time, 0 of 40 ran once: the refusals are the check working, but nothing
	// ran to be tested).
	const calls = 60
	won, ran := 0, 0
	refusals := map[string]int{} // why the calls that did not run failed, for the log
	for i := 0; i < calls; i++ {
		time.Sleep(time.Duration(5+i%4*11) * time.Millisecond) // sample the flipper's states
		out, isErr := callText(t, d, "docker_run", map[string]any{"image": "busybox:latest", "detach": false, "rm": true,
			"volumes": []string{"d:/x"}, "command": "ls -a /x"})
		if !isErr {
			ran++
		} else {
			refusals[strings.ReplaceAll(out, "\n", " ")]++
		}
		if strings.Contains(out, "docker.sock") {
			won++
		}
	}
	n, code := w.sim("exec", sandbox, "--", "docker", "inspect", "--format", "{{.State.Status}}", "flipper")
	require.Zero(t, code, n)
	t.Logf("%d calls: %d ran, %d got the daemon's socket; the flipper is %s; refused: %v", calls, ran, won, strings.TrimSpace(n), refusals)
	assert.Zero(t, won, "a run mounted /var/run")
	assert.Positive(t, ran)
	assert.Equal(t, "running", strings.TrimSpace(n), "the writer was resumed")
}

// TestCancelStopsAForegroundRun: cancelling a foreground docker_run removes its
// container (before, the container went on running after the call had returned).
func TestCancelStopsAForegroundRun(t *testing.T) {
	w := newSimWorld(t)
	const sandbox = "deploy-cancel"
	w.create(sandbox)
	d := w.deployer(sandbox, w.environ())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	res, err := d.CallTool(ctx, mcpserver.Call{Name: "docker_run", Args: json.RawMessage(`{"image":"busybox:latest","detach":false,"command":"sleep 300"}`)})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	out, code := w.sim("exec", sandbox, "--", "docker", "ps", "--all", "--quiet")
	require.Zero(t, code, out)
	assert.Empty(t, strings.TrimSpace(out), "the cancelled run's container is gone")
}

// TestStartChecksTheBindsAgain: a stopped container's volume directory replaced by a link
// to the sandbox's /var/run is refused by docker_start (before, the daemon followed the
// link and the container got the daemon's socket).
func TestStartChecksTheBindsAgain(t *testing.T) {
	w := newSimWorld(t)
	const sandbox = "deploy-start"
	w.create(sandbox)
	d := w.deployer(sandbox, w.environ())
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, "d"), 0o755))
	out, isErr := callText(t, d, "docker_run", map[string]any{"image": "busybox:latest", "name": "cc", "restart": "no", "volumes": []string{"d:/x"}, "command": "sleep 300"})
	require.False(t, isErr, out)
	out, isErr = callText(t, d, "docker_stop", map[string]any{"id": "cc"})
	require.False(t, isErr, out)
	require.NoError(t, os.Remove(filepath.Join(w.ws, "d")))
	require.NoError(t, os.Symlink("/var/run", filepath.Join(w.ws, "d")))
	out, isErr = callText(t, d, "docker_start", map[string]any{"id": "cc"})
	assert.True(t, isErr, out)
	assert.Contains(t, out, "not starting")
	ls, _ := w.sim("exec", sandbox, "--", "sh", "-c", "docker exec cc ls /x 2>&1; docker inspect --format '{{.State.Running}}' cc")
	assert.NotContains(t, ls, "docker.sock")
	assert.Contains(t, ls, "false")
}

// TestCancelStopsADockerExec: cancelling docker_exec kills the command in the container
// (before, it went on running there), and only it.
func TestCancelStopsADockerExec(t *testing.T) {
	w := newSimWorld(t)
	const sandbox = "deploy-cancel-exec"
	w.create(sandbox)
	d := w.deployer(sandbox, w.environ())
	out, isErr := callText(t, d, "docker_run", map[string]any{"image": "busybox:latest", "name": "box", "command": "sleep 301"})
	require.False(t, isErr, out)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	res, err := d.CallTool(ctx, mcpserver.Call{Name: "docker_exec", Args: json.RawMessage(`{"id":"box","command":"sh -c 'sleep 302; echo done'"}`)})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	top, code := w.sim("exec", sandbox, "--", "docker", "top", "box", "-eo", "pid,args")
	require.Zero(t, code, top)
	assert.NotContains(t, top, "sleep 302", "the exec'd command and its child are gone")
	assert.Contains(t, top, "sleep 301", "the container's own process runs on")
}
