package main

import (
	"context"
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAgentNoOutputLostUnderLoad sends 500 concurrent bash calls to the in-VM agent
// (`pi-sbx-backend agent` over stdio, as serve drives it): each must return its output.
// Before shell's reader kept what reached the pipe, the agent returned "(no output)"
// with success for some (1 and 10 of 500 here for the two commands).
func TestAgentNoOutputLostUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("500 concurrent shells")
	}
	bin, err := exec.LookPath("pi-sbx-backend") // put on PATH by testscript.Main
	require.NoError(t, err)
	ctx := context.Background()
	cmd := exec.Command(bin, "agent", "--cwd", t.TempDir())
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "load"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()
	for _, command := range []string{"echo ok", "sleep 2; echo ok"} {
		t.Run(command, func(t *testing.T) {
			const calls = 500
			lost := testbin.Lost(calls, "ok\n", func() string {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": command}})
				switch {
				case err != nil:
					return "error: " + err.Error()
				case len(res.Content) == 1 && !res.IsError:
					if tc, ok := res.Content[0].(*mcp.TextContent); ok {
						return tc.Text
					}
				}
				return "not one successful text block"
			})
			t.Logf("%q: %d of %d calls lost output", command, len(lost), calls)
			assert.Empty(t, lost)
		})
	}
}
