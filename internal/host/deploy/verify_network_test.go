package deploy

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// TestNetworkVerdict: the network check fails where the sandbox's policy cannot be read,
// where no preset was chosen, and where it is looser than PI_SBX_NETWORK asked; it warns
// on allow-all and on an sbx without a policy; a deny-all sandbox lists what it can still
// reach.
func TestNetworkVerdict(t *testing.T) {
	rules := []sbx.Rule{
		{ID: "r1", Action: "allow", Resource: "ok.test", Active: true},
		{ID: "r2", Action: "deny", Resource: "bad.test", Active: true},
		{ID: "r3", Action: "allow", Resource: "inactive.test"},
	}
	noPolicy := fmt.Errorf("%w: found v0.53.0", sbx.ErrNoPolicy)
	tests := []struct {
		name     string
		p        sbx.Policy
		err      error
		stance   string
		ok, warn bool
		evidence string
	}{
		{name: "deny-all lists what it reaches", p: sbx.Policy{Preset: sbx.PresetDenyAll, Rules: rules}, stance: "locked", ok: true,
			evidence: "net: locked (1 allowed); preset deny-all; still reachable: ok.test; denied: bad.test"},
		{name: "balanced", p: sbx.Policy{Preset: sbx.PresetBalanced}, stance: "balanced", ok: true,
			evidence: "net: balanced; preset balanced; allowed: none; denied: none"},
		{name: "allow-all warns", p: sbx.Policy{Preset: sbx.PresetAllowAll}, ok: true, warn: true, evidence: "preset allow-all"},
		{name: "locked by a deny ** rule on an allow-all host", stance: "locked", ok: true,
			p:        sbx.Policy{Preset: sbx.PresetAllowAll, Rules: []sbx.Rule{{ID: "r9", Action: "deny", Resource: "**", Sandbox: "box", Active: true}}},
			evidence: "every host denied by rule (deny **), allow rules included; denied: **"},
		{name: "allow-all under a locked stance", p: sbx.Policy{Preset: sbx.PresetAllowAll}, stance: "locked", evidence: "PI_SBX_NETWORK=locked"},
		{name: "balanced under a locked stance", p: sbx.Policy{Preset: sbx.PresetBalanced}, stance: "locked", evidence: "looser"},
		{name: "deny-all under an open stance", p: sbx.Policy{Preset: sbx.PresetDenyAll}, stance: "open", ok: true, evidence: "preset deny-all"},
		{name: "org governance decides", p: sbx.Policy{OrgGovernance: true, Rules: rules}, stance: "locked", ok: true, evidence: "org governance active"},
		{name: "no preset", p: sbx.Policy{}, evidence: "sbx policy init balanced"},
		{name: "unreadable", err: errors.New("sbx inspect: exit 1"), evidence: "could not read"},
		{name: "sbx without policy", err: noPolicy, ok: true, warn: true, evidence: "every host reachable"},
		{name: "sbx without policy, locked asked", err: noPolicy, stance: "locked", evidence: "PI_SBX_NETWORK=locked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := networkVerdict(tt.p, tt.err, tt.stance)
			assert.Equal(t, "network", c.Name)
			assert.Equal(t, tt.ok, c.OK, "%+v", c)
			assert.Equal(t, tt.warn, c.Warning != "", "%+v", c)
			assert.Contains(t, c.Evidence, tt.evidence)
		})
	}
}
