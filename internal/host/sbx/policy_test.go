package sbx

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSandboxPolicy: the sandbox's policy comes from inspect's "network" where it has
// one, from `policy ls SANDBOX` where not, and not at all from an sbx before v0.55; a
// preset this code does not know is refused, never guessed at.
func TestSandboxPolicy(t *testing.T) {
	const lsAnswer = `{"preset":"balanced","rules":[{"id":"r1","action":"allow","resource":"a.test","active":true}]}`
	tests := []struct {
		name, version, inspect string
		want                   Policy
		wantArgv               []string
		wantErr                error
	}{
		{name: "inspect's network", version: "0.55.0",
			inspect:  `{"name":"box","network":{"preset":"deny-all","org_governance":true,"rules":[{"id":"r2","action":"allow","resource":"b.test","active":false}]}}`,
			want:     Policy{Preset: PresetDenyAll, OrgGovernance: true, Rules: []Rule{{ID: "r2", Action: "allow", Resource: "b.test"}}},
			wantArgv: []string{"--no-input inspect box --json"}},
		{name: "none is no preset", version: "0.55.0", inspect: `{"name":"box","network":{"preset":"none","rules":[]}}`,
			want: Policy{Rules: []Rule{}}, wantArgv: []string{"--no-input inspect box --json"}},
		{name: "no network in inspect: policy ls", version: "0.55.0", inspect: `{"name":"box"}`,
			want:     Policy{Preset: PresetBalanced, Rules: []Rule{{ID: "r1", Action: "allow", Resource: "a.test", Active: true}}},
			wantArgv: []string{"--no-input inspect box --json", "--no-input policy ls box --json"}},
		{name: "unknown preset", version: "0.55.0", inspect: `{"name":"box","network":{"preset":"wide-open"}}`,
			wantErr: ErrOutput, wantArgv: []string{"--no-input inspect box --json"}},
		{name: "before 0.55", version: "0.53.0", wantErr: ErrNoPolicy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeRunner{version: tt.version, answer: func(_ context.Context, c Cmd) (int, string, string) {
				if strings.Contains(strings.Join(c.Args, " "), "policy ls") {
					return 0, lsAnswer, ""
				}
				return 0, tt.inspect, ""
			}}
			got, err := (&Client{Bin: "sbx", Runner: f}).SandboxPolicy(context.Background(), "box")
			assert.Equal(t, tt.wantArgv, f.argvs())
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
