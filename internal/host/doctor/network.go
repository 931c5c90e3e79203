package doctor

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// network checks sbx's network policy (v0.55): a preset chosen (without one, sbx
// prompts before any sandbox runs and, asked not to prompt, refuses: FAIL), allow-all
// (every host reachable: WARN), org governance (local allow rules inactive: said).
func (d *Doctor) network(ctx context.Context) Check {
	ctx, cancel := d.bound(ctx)
	defer cancel()
	const n = "network policy"
	p, err := d.Sbx.PolicyLs(ctx, "")
	switch {
	case errors.Is(err, sbx.ErrNoPolicy):
		return Check{Name: n, Status: Pass, Evidence: err.Error() + "; sbx applies its own default"}
	case err != nil:
		return Check{n, Warn, "sbx policy ls: " + err.Error(), ""}
	case p.Preset == "" && !p.OrgGovernance:
		return Check{n, Fail, "no network preset chosen: sbx would ask before the first sandbox runs, " +
			"and pi-sbx-backend never lets it ask", "sbx policy init balanced"}
	}
	ev := "preset " + p.Preset
	if p.Preset == "" {
		ev = "no local preset"
	}
	if allowed := p.Allowed(); len(allowed) > 0 {
		ev += fmt.Sprintf(", %d allow rule(s): %s", len(allowed), resources(allowed, 5))
	}
	if p.OrgGovernance {
		return Check{Name: n, Status: Pass, Evidence: ev + "; org governance is active: your organisation's rules decide, local allow rules are inactive"}
	}
	if p.Preset == sbx.PresetAllowAll {
		return Check{n, Warn, ev + ": every host is reachable, so the agent can send the workspace anywhere",
			"sbx policy init balanced"}
	}
	return Check{Name: n, Status: Pass, Evidence: ev + " (net: " + p.Word() + ")"}
}

func resources(rules []sbx.Rule, max int) string {
	var out []string
	for i, r := range rules {
		if i == max {
			out = append(out, fmt.Sprintf("… %d more", len(rules)-max))
			break
		}
		out = append(out, r.Resource)
	}
	return strings.Join(out, ", ")
}

// proxy reports the upstream proxy sbx's proxy uses (settings proxy, proxy.sandbox,
// proxy.daemon; v0.55), credentials hidden.
func (d *Doctor) proxy(ctx context.Context) Check {
	const n = "upstream proxy"
	v, err := d.Sbx.Versions(ctx)
	if err != nil || !sbx.Supports(v.Client, "settings", "json") {
		return Check{Name: n, Status: Pass, Evidence: "not read before sbx v" + sbx.V055}
	}
	var set []string
	for _, key := range []string{"proxy", "proxy.sandbox", "proxy.daemon"} {
		cctx, cancel := d.bound(ctx)
		val, err := d.Sbx.Setting(cctx, key)
		cancel()
		if err != nil {
			return Check{n, Warn, "sbx settings get " + key + ": " + err.Error(), ""}
		}
		if val != "" {
			set = append(set, key+"="+redact(val))
		}
	}
	if len(set) == 0 {
		return Check{Name: n, Status: Pass, Evidence: "none: sbx's proxy connects directly"}
	}
	return Check{Name: n, Status: Pass, Evidence: strings.Join(set, ", ")}
}

// redact hides a proxy URL's user and password.
func redact(v string) string {
	u, err := url.Parse(v)
	if err != nil || u.User == nil {
		return v
	}
	u.User = url.User("…")
	return u.String()
}
