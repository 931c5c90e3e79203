package lifecycle

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// TestKeepAliveSession: a session with KeepAlive holds one exec session of its own in the
// sandbox (stdin a pipe; no -e: nothing forwarded; in /, not the workspace), and one
// without does not.
func TestKeepAliveSession(t *testing.T) {
	for _, keep := range []bool{false, true} {
		f := &fakeRunner{answer: func(_ context.Context, c sbx.Cmd) (int, string, string) {
			if c.Args[0] == "ls" {
				return 0, `{"sandboxes":[{"name":"box","status":"running"}]}`, ""
			}
			return 0, "", ""
		}}
		s, err := NewSession(&sbx.Client{Bin: "sbx", Runner: f}, SessionOptions{Name: "box", Pinned: true, Owner: 77, Workspace: "/ws", KeepAlive: keep})
		require.NoError(t, err)
		_, err = s.Ensure(context.Background())
		require.NoError(t, err)
		want := []string{"ls --json"}
		if keep {
			want = append(want, "exec -i -w / box -- sh -c exec cat >/dev/null") // in /: never a holder of the workspace
		}
		assert.Equal(t, want, f.argvs(), "keep-alive %v", keep)
		if keep {
			f.mu.Lock()
			_, isPipe := f.calls[1].Stdin.(*os.File)
			f.mu.Unlock()
			assert.True(t, isPipe, "its stdin is a pipe only this process writes to")
		}
		require.NoError(t, s.Close(context.Background()))
	}
}

// TestSessionRefusesTooOldSbx: a session refuses a too old sbx before anything else runs.
func TestSessionRefusesTooOldSbx(t *testing.T) {
	f := &fakeRunner{version: "0.40.1", answer: func(context.Context, sbx.Cmd) (int, string, string) { return 0, "{}", "" }}
	s, err := NewSession(&sbx.Client{Bin: "sbx", Runner: f}, SessionOptions{Owner: 77, Workspace: "/ws"})
	require.NoError(t, err)
	_, err = s.Ensure(context.Background())
	require.ErrorIs(t, err, sbx.ErrTooOld)
	assert.Empty(t, f.argvs(), "nothing but sbx version ran")
}
