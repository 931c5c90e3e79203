//go:build linux

package agentlink

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
)

// TestReplacedAgentIsInstalledAgainBeforeItRuns: an agent binary replaced in the VM after
// it was installed is not run — before each run it must still be the file whose hash was
// checked (exit 126) — and the call still works, on the agent installed again. Both
// transports.
func TestReplacedAgentIsInstalledAgainBeforeItRuns(t *testing.T) {
	replace := map[string]func(t *testing.T, path string){
		"renamed over": func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path+".new", []byte("#!/bin/sh\necho replaced\n"), 0o755))
			require.NoError(t, os.Rename(path+".new", path))
		},
		"written in place, same size": func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteAt([]byte("#!/bin/sh\n"), 0)
			require.NoError(t, err)
			require.NoError(t, f.Close())
		},
	}
	for _, transport := range []string{"persistent", "per-call"} {
		for how, change := range replace {
			t.Run(transport+"/"+how, func(t *testing.T) {
				ch, f := newChannel(t, t.TempDir(), nil)
				var caller mcpserver.Caller = ch
				if transport == "per-call" {
					caller = &PerCall{Target: ch.Target}
				}
				call := func() {
					t.Helper()
					_, err := caller.CallTool(context.Background(), mcpserver.Call{Name: "ls", Args: json.RawMessage(`{}`)})
					require.NoError(t, err)
				}
				call()
				path, err := f.installer.Install(context.Background(), box)
				require.NoError(t, err)
				change(t, path)
				f.sbx.crash() // the persistent channel's agent starts again on the next call
				require.Eventually(t, func() bool {
					ch.mu.Lock()
					defer ch.mu.Unlock()
					return ch.cur == nil || !ch.cur.alive()
				}, 10*time.Second, time.Millisecond, "the channel sees its agent gone")
				call()
				want, err := os.ReadFile(f.exe)
				require.NoError(t, err)
				got, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Equal(t, want, got, "the agent was installed again")
				runs := 0
				for _, argv := range f.sbx.ran() {
					if argv[0] == "sh" && argv[2] == verifiedRun {
						runs++
						assert.Equal(t, path, argv[6], "the agent runs by the path it was installed at")
					}
				}
				assert.GreaterOrEqual(t, runs, 3, "every run is checked: before, the refused one, after")
			})
		}
	}
}

// TestFailedInstallLeavesNoTemporaryFile: an install that fails mid-way (stdin not
// forwarded, then a base64 chunk that cannot be written) leaves no temporary file in
// the VM, and no agent; one left by an install that died long ago is removed by the
// next install's probe, one in flight is not.
func TestFailedInstallLeavesNoTemporaryFile(t *testing.T) {
	f := newFixture(t, runtime.GOARCH)
	if vmArch(t) != runtime.GOARCH {
		t.Skip("host and VM architecture differ")
	}
	f.sbx.dropStdin = true
	f.sbx.failChunk = 2
	_, err := f.installer.Install(context.Background(), box)
	require.ErrorContains(t, err, "No space left on device")
	entries, err := os.ReadDir(f.vmDir)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing left in the VM's directory")

	old := filepath.Join(f.vmDir, "pi-sbx-agent-v0_dead-01234567.tmp.0123456789ab")
	inFlight := filepath.Join(f.vmDir, "pi-sbx-agent-v0_busy-01234567.tmp.ba9876543210")
	for _, p := range []string{old, inFlight} {
		require.NoError(t, os.WriteFile(p, []byte("part of an agent"), 0o644))
	}
	hourAgo := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(old, hourAgo, hourAgo))
	f.sbx.dropStdin = false
	path, err := f.installer.Install(context.Background(), box)
	require.NoError(t, err)
	entries, err = os.ReadDir(f.vmDir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{filepath.Base(path), filepath.Base(inFlight)}, names,
		"the dead install's file removed, the one in flight kept: %s", strings.Join(names, " "))
}
