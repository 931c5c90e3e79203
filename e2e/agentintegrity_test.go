//go:build e2e

package e2e

import (
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReplacedAgentIsNeverRun: the agent binary replaced inside the VM (with a script
// that leaves a mark) is not run by the next start of the channel or the next per-call
// exec: its hash is checked first. Replaced by the agent user (a tool call could do it),
// it is installed again and the call works; replaced by root, the file is no longer the
// agent user's to replace and the call fails with an error saying so. Both transports.
func TestReplacedAgentIsNeverRun(t *testing.T) {
	for _, transport := range []string{"persistent", "per-call"} {
		for _, user := range []string{"agent", "root"} {
			t.Run(transport+"/"+user, func(t *testing.T) {
				w := newWorld(t)
				box := "hrel-replaced-" + strconv.Itoa(os.Getpid()) + "-" + transport + "-" + user
				cs, _, _ := w.serve(nil, []string{"--transport", transport}, simEnv("DOCKER_SANDBOX="+box)...)
				res := call(t, cs, "bash", `{"command":"echo first"}`)
				require.False(t, res.IsError, text(res))

				replace := `for f in /tmp/pi-sbx-agent-*; do printf '#!/bin/sh\ntouch /tmp/hrel-replaced-ran\nexec sleep 600\n' > "$f.x" && chmod 755 "$f.x" && mv -f "$f.x" "$f"; done`
				out, code := w.sim("exec", "-u", user, box, "sh", "-c", replace)
				require.Zero(t, code, out)
				out, code = w.sim("stop", box) // the channel's agent starts again on the next call
				require.Zero(t, code, out)
				res = call(t, cs, "bash", `{"command":"echo second"}`)
				if user == "agent" {
					require.False(t, res.IsError, text(res))
					assert.Equal(t, "second\n", text(res))
				} else {
					require.True(t, res.IsError, text(res))
					assert.Contains(t, text(res), "installing the agent in sandbox "+box)
					assert.Contains(t, text(res), "Operation not permitted")
				}
				out, code = w.sim("exec", box, "sh", "-c", "ls /tmp/hrel-replaced-ran 2>&1")
				assert.NotZero(t, code, "the replaced binary never ran: %s", out)
			})
		}
	}
}
