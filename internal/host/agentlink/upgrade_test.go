//go:build linux

package agentlink

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An upgrade (pi update, a newer release) meets a warm sandbox that still holds the agent
// an older serve installed: install by hash puts the new one beside it under its own name
// (version and hash), runs that, and removes the old one. An identical build is reused.
func TestInstallReplacesOtherAgents(t *testing.T) {
	arch := vmArch(t)
	tests := []struct {
		name       string
		oldVersion string
		oldBinary  string
		dropStdin  bool // the argv fallback delivers it
		reused     bool
	}{
		{"another version", "v1.0.0", "agent v1.0.0", false, false},
		{"another version, delivered in argv", "v1.0.0", "agent v1.0.0", true, false},
		{"the same version, another build", "v2.0.0", "agent v2.0.0, another build", false, false},
		{"the same build", "v2.0.0", "agent v2.0.0", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, arch)
			install := func(version, binary string) string {
				t.Helper()
				exe := filepath.Join(t.TempDir(), "pi-sbx-backend")
				require.NoError(t, os.WriteFile(exe, []byte(binary), 0o755))
				in := &Installer{Sbx: f.client, Version: version, Agents: finder(exe, arch), Dir: f.vmDir}
				p, err := in.Install(context.Background(), box)
				require.NoError(t, err)
				return p
			}
			old := install(tc.oldVersion, tc.oldBinary)
			// A file another install is writing right now is left alone.
			inFlight := filepath.Join(f.vmDir, "pi-sbx-agent-v3-12345678.tmp.99")
			require.NoError(t, os.WriteFile(inFlight, []byte("half"), 0o644))

			f.sbx.dropStdin = tc.dropStdin
			f.sbx.execs = nil
			cur := install("v2.0.0", "agent v2.0.0")
			got, err := os.ReadFile(cur)
			require.NoError(t, err)
			assert.Equal(t, "agent v2.0.0", string(got), "the new agent is what runs")
			if tc.reused {
				assert.Equal(t, old, cur)
				assert.Len(t, f.sbx.ran(), 1, "only the probe ran")
			} else {
				assert.NotEqual(t, old, cur)
				assert.NoFileExists(t, old, "the old agent is removed")
			}
			assert.FileExists(t, inFlight)
			left, err := filepath.Glob(filepath.Join(f.vmDir, "pi-sbx-agent-*"))
			require.NoError(t, err)
			assert.ElementsMatch(t, []string{cur, inFlight}, left)
		})
	}
}
