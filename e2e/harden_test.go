//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServeKeepsForwardedValuesOutOfEveryArgv plants a value in a forwarded PI_*
// variable and in an allowlisted one, and scans every process's /proc/*/cmdline (which
// any user can read) while serve runs a call that reads them: the values reach the
// command in the VM, yet appear in no argv — neither the long-lived `sbx exec -i` of the
// agent channel nor a per-call `sbx exec`.
func TestServeKeepsForwardedValuesOutOfEveryArgv(t *testing.T) {
	for _, transport := range []string{"persistent", "per-call"} {
		t.Run(transport, func(t *testing.T) {
			w := newWorld(t)
			const planted = "planted-4f9c2e-secret"
			cs, _, stderr := w.serve(nil, []string{"--transport", transport},
				"PI_PLANTED="+planted+"-pi", "MY_TOKEN="+planted+"-tok",
				"DOCKER_SANDBOX_ENV_ALLOWLIST=SBXSIM_STATE,SBXSIM_DOCKER,MY_TOKEN")
			done := make(chan *mcp.CallToolResult, 1)
			go func() {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash",
					Arguments: json.RawMessage(`{"command":"sleep 2; echo \"$PI_PLANTED $MY_TOKEN\""}`)})
				assert.NoError(t, err)
				done <- res
			}()
			scans := 0
			for {
				select {
				case res := <-done:
					require.NotNil(t, res)
					require.False(t, res.IsError, "%s\n%s", text(res), stderr)
					assert.Equal(t, planted+"-pi "+planted+"-tok\n", text(res), "the values reached the VM")
					assert.Greater(t, scans, 5, "scanned while the call ran")
					return
				default:
				}
				for pid, argv := range cmdlines(t) {
					assert.NotContains(t, argv, planted, "pid %d's argv carries a forwarded value: %q", pid, argv)
				}
				scans++
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// cmdlines returns every process's argv, NULs as spaces.
func cmdlines(t *testing.T) map[string]string {
	t.Helper()
	paths, err := filepath.Glob("/proc/[0-9]*/cmdline")
	require.NoError(t, err)
	out := make(map[string]string, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}
		out[filepath.Base(filepath.Dir(p))] = string(bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
	}
	return out
}

// loggingSbx writes a wrapper around sbxsim that records every invocation (one line of
// arguments) in log and runs extra shell code after sbxsim for `create`.
func loggingSbx(t *testing.T, afterCreate string) (bin, log string) {
	t.Helper()
	dir := t.TempDir() // outside every workspace: serve refuses to run an sbx the sandbox can write
	bin, log = filepath.Join(dir, "sbx"), filepath.Join(dir, "calls.log")
	// The verb is the first argument that is not one of sbx's global flags (--no-input).
	script := "#!/bin/sh\necho \"$*\" >> " + log + "\n" + simBin + " \"$@\"\nrc=$?\n" +
		"verb=; for a; do case $a in -*) ;; *) verb=$a; break;; esac; done\n" +
		"if [ \"$verb\" = create ]; then " + afterCreate + "; fi\nexit $rc\n"
	require.NoError(t, os.WriteFile(bin, []byte(script), 0o755))
	return bin, log
}

// sbxCalls returns the recorded invocations whose verb is verb (after the global flags).
func sbxCalls(t *testing.T, log, verb string) []string {
	t.Helper()
	data, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		args := strings.Fields(l)
		for len(args) > 0 && strings.HasPrefix(args[0], "-") {
			args = args[1:] // sbx's global flags (--no-input)
		}
		if len(args) > 0 && args[0] == verb {
			out = append(out, l)
		}
	}
	return out
}

// TestOrderlyExitDisarmsTheWatchdog: after serve has torn its sandbox down and exited,
// the watchdog does not find its owner dead and run sbx rm again (it used to, five
// times, for ten seconds).
func TestOrderlyExitDisarmsTheWatchdog(t *testing.T) {
	w := newWorld(t)
	bin, log := loggingSbx(t, "true")
	cs, cmd, stderr := w.serve(nil, nil, "PI_SBX_BIN="+bin)
	call(t, cs, "ls", `{}`)
	require.Len(t, w.sandboxes(), 1)
	require.NoError(t, cs.Close()) // stdin ends: orderly shutdown
	require.NoError(t, ignoreExit(cmd.Wait()), stderr.String())
	assert.Empty(t, w.sandboxes())
	time.Sleep(7 * time.Second) // the watchdog polls every 2 s, then retries every 2 s
	assert.Len(t, sbxCalls(t, log, "rm"), 1, "one sbx rm, serve's own:\n%s", stderr)
	for pid, argv := range cmdlines(t) {
		assert.NotContains(t, argv, "pi-sbx-watchdog "+strconv.Itoa(cmd.Process.Pid)+" ", "pid %d: a watchdog outlived its owner", pid)
	}
}

// TestCancelDuringCreateLeaksNothing: the first call is cancelled (the client times out)
// while sbx create runs; the creation completes anyway, the next call gets the same
// sandbox without hanging, and the sandbox goes with the session.
func TestCancelDuringCreateLeaksNothing(t *testing.T) {
	w := newWorld(t)
	bin, log := loggingSbx(t, "sleep 2") // sbx create returns 2 s after the sandbox exists
	cs, cmd, stderr := w.serve(nil, nil, "PI_SBX_BIN="+bin)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ls", Arguments: json.RawMessage(`{}`)})
	cancel()
	require.Error(t, err, "the first call is cancelled mid-create")

	ctx, cancel = context.WithTimeout(context.Background(), time.Minute) // bounds a hang only
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: json.RawMessage(`{"command":"hostname"}`)})
	require.NoError(t, err, "the next call does not hang")
	require.False(t, res.IsError, "%s\n%s", text(res), stderr)
	boxes := w.sandboxes()
	require.Len(t, boxes, 1)
	assert.Equal(t, boxes[0]+"\n", text(res))
	assert.Len(t, sbxCalls(t, log, "create"), 1, "one creation, shared")

	require.NoError(t, cs.Close())
	require.NoError(t, ignoreExit(cmd.Wait()), stderr.String())
	assert.Empty(t, w.sandboxes(), "the sandbox is removed with the session")
}

// TestKillDuringCreateLeaksNothing: serve dies by kill -9 while sbx create runs; the
// watchdog, armed before the create, removes the sandbox.
func TestKillDuringCreateLeaksNothing(t *testing.T) {
	w := newWorld(t)
	bin, _ := loggingSbx(t, "sleep 3")
	cs, cmd, _ := w.serve(nil, nil, "PI_SBX_BIN="+bin)
	go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ls", Arguments: json.RawMessage(`{}`)})
	require.Eventually(t, func() bool { return len(w.sandboxes()) == 1 }, 30*time.Second, 50*time.Millisecond)
	require.NoError(t, cmd.Process.Kill())
	require.Eventually(t, func() bool { return len(w.sandboxes()) == 0 }, 60*time.Second, 200*time.Millisecond,
		"the watchdog removed the sandbox whose creation its owner did not live to see")
}
