package lifecycle

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// TestEnsureRefusesAnExistingSandboxThatMountsAHostFile: a pinned sandbox that already
// exists may mount more than this session's workspace; if it mounts a file the host
// runs, it is refused before anything else runs.
func TestEnsureRefusesAnExistingSandboxThatMountsAHostFile(t *testing.T) {
	tools := t.TempDir()
	f := &fakeRunner{answer: func(_ context.Context, c sbx.Cmd) (int, string, string) {
		return 0, `{"sandboxes":[{"name":"mybox","status":"running","workspaces":["/ws","` + tools + `:ro"]}]}`, ""
	}}
	s, err := NewSession(&sbx.Client{Bin: "sbx", Runner: f}, SessionOptions{Name: "mybox", Pinned: true, Owner: 77, Workspace: "/ws",
		HostFiles: []sbx.HostFile{{Role: "the sbx program", Path: filepath.Join(tools, "sbx")}}})
	require.NoError(t, err)
	_, err = s.Ensure(context.Background())
	assert.ErrorIs(t, err, sbx.ErrSandboxWritable)
	assert.Contains(t, err.Error(), "sandbox mybox: ")
	assert.Equal(t, []string{"ls --json"}, f.argvs())
}
