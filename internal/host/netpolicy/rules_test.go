package netpolicy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// fakePolicy records the rules asked for, with the host preset it plays.
type fakePolicy struct {
	preset string
	calls  []string
}

func (f *fakePolicy) PolicyLs(context.Context, string) (sbx.Policy, error) {
	if f.preset == "old" {
		return sbx.Policy{}, sbx.ErrNoPolicy
	}
	return sbx.Policy{Preset: f.preset}, nil
}

func (f *fakePolicy) PolicyRule(_ context.Context, action, sandbox string, hosts []string) error {
	f.calls = append(f.calls, strings.Join(strings.Fields(action+" "+sandbox+" "+strings.Join(hosts, ",")), " "))
	return nil
}

// TestChange: each scope becomes the sbx rules it can; a per-sandbox allow outside
// deny-all is refused with what would work; bad input is refused before sbx runs.
func TestChange(t *testing.T) {
	for _, tc := range []struct {
		name, preset, action string
		hosts                []string
		scope                Scope
		sandbox              string
		wantCalls            []string
		wantErr              string
	}{
		{name: "global allow", preset: "balanced", action: "allow", hosts: []string{"a.test", "*.b.test:8080"}, scope: Global,
			wantCalls: []string{"allow a.test,*.b.test:8080"}},
		{name: "session allow under deny-all", preset: "deny-all", action: "allow", hosts: []string{"a.test"}, scope: Session, sandbox: "box",
			wantCalls: []string{"allow box a.test"}},
		{name: "session allow under balanced", preset: "balanced", action: "allow", hosts: []string{"a.test"}, scope: Session, sandbox: "box",
			wantErr: "only under the deny-all preset"},
		{name: "session deny under balanced", preset: "balanced", action: "deny", hosts: []string{"a.test"}, scope: Session, sandbox: "box",
			wantCalls: []string{"deny box a.test"}},
		{name: "session without a sandbox", preset: "deny-all", action: "deny", hosts: []string{"a.test"}, scope: Session, wantErr: "DOCKER_SANDBOX"},
		{name: "a flag as host", preset: "deny-all", action: "allow", hosts: []string{"--sandbox"}, scope: Global, wantErr: "invalid host"},
		{name: "a list as host", preset: "deny-all", action: "allow", hosts: []string{"a.test,b.test"}, scope: Global, wantErr: "invalid host"},
		{name: "no host", preset: "deny-all", action: "allow", scope: Global, wantErr: "no host"},
		{name: "bad port", preset: "deny-all", action: "allow", hosts: []string{"a.test:99999"}, scope: Global, wantErr: "port out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakePolicy{preset: tc.preset}
			r := &Rules{Sbx: f, StateDir: t.TempDir()}
			msg, err := r.Change(context.Background(), tc.action, tc.hosts, tc.scope, tc.sandbox, "/w")
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				assert.Empty(t, f.calls)
				return
			}
			require.NoError(t, err)
			assert.NotEmpty(t, msg)
			assert.Equal(t, tc.wantCalls, f.calls)
		})
	}
}

// TestProjectRulesAtCreate: project rules are remembered in the state directory (not the
// workspace) and applied to the project's next sandbox, with the session's stance.
func TestProjectRulesAtCreate(t *testing.T) {
	state, ws := t.TempDir(), t.TempDir()
	f := &fakePolicy{preset: "deny-all"}
	r := &Rules{Sbx: f, StateDir: state}
	_, err := r.Change(context.Background(), "allow", []string{"api.test"}, Project, "", ws)
	require.NoError(t, err)
	_, err = r.Change(context.Background(), "deny", []string{"evil.test"}, Project, "", ws)
	require.NoError(t, err)
	assert.Empty(t, f.calls, "no sandbox yet: nothing applied")
	entries, _ := os.ReadDir(ws)
	assert.Empty(t, entries, "nothing written in the workspace")
	files, _ := filepath.Glob(filepath.Join(state, "*.json"))
	assert.Len(t, files, 1)

	require.NoError(t, r.AtCreate(context.Background(), "box", ws, ""))
	assert.Equal(t, []string{"deny box evil.test", "allow box api.test"}, f.calls)

	for _, tc := range []struct {
		preset, stance string
		wantCalls      []string
		wantErr        string
	}{
		{preset: "balanced", stance: StanceLocked, wantCalls: []string{"deny box **"}},
		{preset: "deny-all", stance: StanceLocked, wantCalls: nil},
		{preset: "balanced", stance: StanceBalanced, wantCalls: nil},
		{preset: "deny-all", stance: StanceOpen, wantErr: "sbx policy init allow-all"},
		{preset: "allow-all", stance: StanceBalanced, wantErr: "sbx policy init balanced"},
		{preset: "old", stance: StanceLocked, wantErr: "needs v0.55.0"},
		{preset: "balanced", stance: "shut", wantErr: "want locked, balanced or open"},
	} {
		f := &fakePolicy{preset: tc.preset}
		err := (&Rules{Sbx: f, StateDir: t.TempDir()}).AtCreate(context.Background(), "box", ws, tc.stance)
		if tc.wantErr != "" {
			assert.ErrorContains(t, err, tc.wantErr, "%s under %s", tc.stance, tc.preset)
			continue
		}
		assert.NoError(t, err)
		assert.Equal(t, tc.wantCalls, f.calls, "%s under %s", tc.stance, tc.preset)
	}
}
