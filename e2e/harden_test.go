package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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
