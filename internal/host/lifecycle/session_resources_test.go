package lifecycle

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// TestSessionCreatesWithResourcesAndOwnerRecord: the create options reach sbx create, the
// owner record is written for GC, and removed with the sandbox.
func TestSessionCreatesWithResourcesAndOwnerRecord(t *testing.T) {
	f := &fakeRunner{answer: func(_ context.Context, c sbx.Cmd) (int, string, string) {
		if c.Args[0] == "ls" {
			return 0, `{"sandboxes":[]}`, ""
		}
		return 0, "", ""
	}}
	s, err := NewSession(&sbx.Client{Bin: "sbx", Runner: f}, SessionOptions{
		Resources: sbx.Resources{CPUs: "2", Memory: "1g", Template: "my/template:1"}, Owners: &Owners{Dir: t.TempDir()}, Workspace: "/ws"})
	require.NoError(t, err)
	_, err = s.Ensure(context.Background())
	require.NoError(t, err)
	assert.Contains(t, f.argvs(), "create --name "+s.Name+" --cpus 2 --memory 1g --template my/template:1 --pull missing shell /ws")
	rec, err := s.Owners.Read(s.Name)
	require.NoError(t, err)
	assert.Equal(t, os.Getpid(), rec.PID)
	assert.Equal(t, "/ws", rec.Workspace)
	require.NoError(t, s.Close(context.Background()))
	_, err = s.Owners.Read(s.Name)
	assert.ErrorIs(t, err, os.ErrNotExist)

	_, err = NewSession(&sbx.Client{Bin: "sbx", Runner: f}, SessionOptions{Resources: sbx.Resources{Memory: "100m"}, Workspace: "/ws"})
	assert.ErrorContains(t, err, "512 MiB")
}
