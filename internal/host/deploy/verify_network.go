package deploy

import (
	"context"
	"errors"
	"fmt"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

const networkCheck = "network"

// checkNetwork reports the network policy that applies to the sandbox (sbx's proxy sees
// every connection out of it): what it can reach, and whether that is what the session
// asked for (PI_SBX_NETWORK). The workspace can leave by any host the policy allows, so
// an open policy is said, and a policy more open than the session's stance fails.
func (d *Deployer) checkNetwork(ctx context.Context, name string) Check {
	p, err := d.Sbx.SandboxPolicy(ctx, name)
	return networkVerdict(p, err, d.Settings.Network)
}

// stanceWants is the loosest preset each PI_SBX_NETWORK stance accepts, as a rank.
var stanceWants = map[string]int{"locked": 0, "balanced": 1, "open": 2}

// presetRank orders the presets from the most closed.
var presetRank = map[string]int{sbx.PresetDenyAll: 0, sbx.PresetBalanced: 1, sbx.PresetAllowAll: 2}

// networkVerdict judges the sandbox's policy p (or the error reading it) against the
// session's stance ("" when the session asked for none).
func networkVerdict(p sbx.Policy, err error, stance string) Check {
	want, asked := stanceWants[stance]
	switch {
	case errors.Is(err, sbx.ErrNoPolicy) && asked && want < presetRank[sbx.PresetAllowAll]:
		return fail(networkCheck, "PI_SBX_NETWORK=%s, but %v: the sandbox reaches any host", stance, err)
	case errors.Is(err, sbx.ErrNoPolicy):
		c := pass(networkCheck, "%v: no policy, every host reachable", err)
		c.Warning = "the sandbox can send the workspace to any host; sbx v" + sbx.V055 + " or later can limit it"
		return c
	case err != nil:
		return fail(networkCheck, "could not read the sandbox's network policy: %v", err)
	case p.Preset == "" && !p.OrgGovernance:
		return fail(networkCheck, "no network preset chosen (%s): run sbx policy init balanced", policyEvidence(p))
	case asked && !p.OrgGovernance && effectiveRank(p) > want:
		return fail(networkCheck, "PI_SBX_NETWORK=%s, but the sandbox's policy is looser: %s", stance, policyEvidence(p))
	case effectiveRank(p) == presetRank[sbx.PresetAllowAll] && !p.OrgGovernance:
		c := pass(networkCheck, "%s", policyEvidence(p))
		c.Warning = "every host is reachable (preset allow-all): the sandbox can send the workspace anywhere; " +
			"PI_SBX_NETWORK=balanced or locked, or sbx policy init balanced, limits it"
		return c
	}
	return pass(networkCheck, "%s", policyEvidence(p))
}

// effectiveRank is how open the sandbox is: its preset's rank, or locked when an active
// deny rule covers every host (`**`; PI_SBX_NETWORK=locked adds one for the sandbox on a
// host whose preset is not deny-all), since deny rules always win.
func effectiveRank(p sbx.Policy) int {
	if deniesAll(p) {
		return presetRank[sbx.PresetDenyAll]
	}
	return presetRank[p.Preset]
}

func deniesAll(p sbx.Policy) bool {
	for _, r := range p.Rules {
		if r.Active && r.Action == "deny" && r.Resource == "**" {
			return true
		}
	}
	return false
}

// policyEvidence says the policy in a word, then what it lets through and holds back.
func policyEvidence(p sbx.Policy) string {
	preset := p.Preset
	if preset == "" {
		preset = "none"
	}
	ev := fmt.Sprintf("net: %s; preset %s", p.Word(), preset)
	if p.OrgGovernance {
		ev += "; org governance active (local allow rules inactive)"
	}
	var allowed, denied []string
	for _, r := range p.Rules {
		switch {
		case !r.Active:
		case r.Action == "allow":
			allowed = append(allowed, r.Resource)
		case r.Action == "deny":
			denied = append(denied, r.Resource)
		}
	}
	switch {
	case deniesAll(p):
		return ev + fmt.Sprintf("; every host denied by rule (deny **), allow rules included; denied: %s", orNone(denied))
	case p.Preset == sbx.PresetDenyAll:
		return ev + fmt.Sprintf("; still reachable: %s; denied: %s", orNone(allowed), orNone(denied))
	}
	return ev + fmt.Sprintf("; allowed: %s; denied: %s", orNone(allowed), orNone(denied))
}
