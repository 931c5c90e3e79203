package sbx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// sbx's network policy (v0.55, `sbx policy …`): every outbound TCP connection of a
// sandbox goes through sbx's host proxy, which applies a preset (allow-all, balanced,
// deny-all) and allow/deny rules, global or per sandbox; deny wins; an active org
// governance makes local allow rules inactive. The JSON shapes of `policy ls` and
// `policy log` are undocumented (sbx-2026-12.md): the keys read here are sbxsim's
// (docs/sbxsim.md), and anything else is tolerated or refused, never guessed at.

// ErrNoPolicy: this sbx has no `policy` command (before v0.55).
var ErrNoPolicy = errors.New("this sbx has no network policy command (needs v" + V055 + ")")

// Presets, as `policy init` names them.
const (
	PresetAllowAll = "allow-all"
	PresetBalanced = "balanced"
	PresetDenyAll  = "deny-all"
)

// Rule is one network rule of `policy ls --json`.
type Rule struct {
	ID       string `json:"id"`
	Action   string `json:"action"`   // allow | deny
	Resource string `json:"resource"` // host pattern, optionally :port
	Sandbox  string `json:"sandbox"`  // "" for a global rule
	Source   string `json:"source"`   // local | org | kit | preset
	Active   bool   `json:"active"`
}

// Policy is the host's network policy as `policy ls [SANDBOX] --json` reports it.
type Policy struct {
	Preset        string `json:"preset"` // "" when none was chosen
	OrgGovernance bool   `json:"org_governance"`
	Rules         []Rule `json:"rules"`
}

// hasPolicy reports whether this sbx has the policy verb; it learns the version.
func (c *Client) hasPolicy(ctx context.Context) error {
	v, err := c.Versions(ctx)
	if err != nil {
		return err
	}
	if verb, _ := VerbNamed("policy"); !verb.At(v.Client) {
		return fmt.Errorf("%w: found v%s", ErrNoPolicy, v.Client)
	}
	return nil
}

// PolicyLs returns the policy (`sbx policy ls [SANDBOX] --json`): for a sandbox, the
// rules that apply to it (global and its own).
func (c *Client) PolicyLs(ctx context.Context, sandbox string) (Policy, error) {
	if err := c.hasPolicy(ctx); err != nil {
		return Policy{}, err
	}
	args := []string{"policy", "ls"}
	if sandbox != "" {
		if err := ValidateName(sandbox); err != nil {
			return Policy{}, err
		}
		args = append(args, sandbox)
	}
	res, err := c.run(ctx, call{op: "policy ls", sandbox: sandbox, args: append(args, "--json"), maxOut: 4 << 20})
	if err != nil {
		return Policy{}, err
	}
	var p Policy
	if err := json.Unmarshal(bytes.TrimSpace(res.stdout), &p); err != nil {
		return Policy{}, &Error{Op: "policy ls", Err: fmt.Errorf("%w: %v", ErrOutput, err)}
	}
	return checkPreset("policy ls", p)
}

// SandboxPolicy is the policy that applies to one sandbox, as `inspect SANDBOX --json`
// reports it under "network" (sbx documents that inspect shows the network policy but
// not its keys: the ones read are sbxsim's, the same as `policy ls`'s). Where inspect's
// answer has no "network", `policy ls SANDBOX --json` says it instead.
func (c *Client) SandboxPolicy(ctx context.Context, sandbox string) (Policy, error) {
	if err := c.hasPolicy(ctx); err != nil {
		return Policy{}, err
	}
	if err := ValidateName(sandbox); err != nil {
		return Policy{}, err
	}
	res, err := c.run(ctx, call{op: "inspect", sandbox: sandbox, args: []string{"inspect", sandbox, "--json"}, maxOut: 1 << 20})
	if err != nil {
		return Policy{}, err
	}
	var raw struct {
		Network *Policy `json:"network"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(res.stdout), &raw); err != nil {
		return Policy{}, &Error{Op: "inspect", Sandbox: sandbox, Err: fmt.Errorf("%w: %v", ErrOutput, err)}
	}
	if raw.Network == nil {
		return c.PolicyLs(ctx, sandbox)
	}
	return checkPreset("inspect", *raw.Network)
}

// checkPreset normalises "none" to "" and refuses a preset this code does not know.
func checkPreset(op string, p Policy) (Policy, error) {
	switch p.Preset {
	case "", "none":
		p.Preset = ""
	case PresetAllowAll, PresetBalanced, PresetDenyAll:
	default:
		return Policy{}, &Error{Op: op, Err: fmt.Errorf("%w: unknown preset %q", ErrOutput, clip(p.Preset, 40))}
	}
	return p, nil
}

// Allowed counts the active allow rules (for a deny-all host: what it can still reach).
func (p Policy) Allowed() []Rule {
	var out []Rule
	for _, r := range p.Rules {
		if r.Active && r.Action == "allow" {
			out = append(out, r)
		}
	}
	return out
}

// Word is the policy in a word or two, as the status line shows it: "open", "balanced",
// "locked (3 allowed)", "org", or "none" when no preset was chosen.
func (p Policy) Word() string {
	switch {
	case p.OrgGovernance:
		return "org"
	case p.Preset == PresetAllowAll:
		return "open"
	case p.Preset == PresetBalanced:
		return "balanced"
	case p.Preset == PresetDenyAll:
		return fmt.Sprintf("locked (%d allowed)", len(p.Allowed()))
	}
	return "none"
}

// hostPatternRE is what an allow/deny argument may be: a host name (optionally *. or
// **), an IP or CIDR, optionally :PORT. Nothing that could be a flag or a list.
var hostPatternRE = regexp.MustCompile(`^(\*\*|(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*|[0-9.]+(/[0-9]{1,2})?|\[[0-9A-Fa-f:]+\](/[0-9]{1,3})?)(:[0-9]{1,5})?$`)

// ValidHostPattern checks one host argument of allow/deny.
func ValidHostPattern(h string) error {
	if len(h) > 253 || !hostPatternRE.MatchString(h) {
		return fmt.Errorf("invalid host %q: want a host name (example.com, *.example.com), an IP or CIDR, optionally :PORT", h)
	}
	if _, port, ok := strings.Cut(strings.TrimPrefix(h, "["), "]:"); ok || strings.Count(h, ":") == 1 {
		if !ok {
			_, port, _ = strings.Cut(h, ":")
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("invalid host %q: port out of range", h)
		}
	}
	return nil
}

// PolicyRule adds allow or deny rules for hosts (`sbx policy allow|deny network
// [--sandbox NAME] h1,h2`), global when sandbox is "". sbx refuses a per-sandbox allow
// unless the host preset is deny-all; its message says so.
func (c *Client) PolicyRule(ctx context.Context, action, sandbox string, hosts []string) error {
	if action != "allow" && action != "deny" {
		return fmt.Errorf("policy: action %q: want allow or deny", action)
	}
	if len(hosts) == 0 {
		return errors.New("policy: no host given")
	}
	for _, h := range hosts {
		if err := ValidHostPattern(h); err != nil {
			return err
		}
	}
	if err := c.hasPolicy(ctx); err != nil {
		return err
	}
	args := []string{"policy", action, "network"}
	if sandbox != "" {
		if err := ValidateName(sandbox); err != nil {
			return err
		}
		args = append(args, "--sandbox", sandbox)
	}
	args = append(args, strings.Join(hosts, ","))
	_, err := c.run(ctx, call{op: "policy " + action, sandbox: sandbox, args: args, maxOut: 1 << 16})
	return err
}

// PolicyRemove removes the local rules for resource (`sbx policy rm network --resource
// R [--sandbox NAME]`).
func (c *Client) PolicyRemove(ctx context.Context, sandbox, resource string) error {
	if err := ValidHostPattern(resource); err != nil {
		return err
	}
	if err := c.hasPolicy(ctx); err != nil {
		return err
	}
	args := []string{"policy", "rm", "network", "--resource", resource}
	if sandbox != "" {
		if err := ValidateName(sandbox); err != nil {
			return err
		}
		args = append(args, "--sandbox", sandbox)
	}
	_, err := c.run(ctx, call{op: "policy rm", sandbox: sandbox, args: args, maxOut: 1 << 16})
	return err
}

// Decision is one entry of `policy log --json`.
type Decision struct {
	Time     time.Time `json:"time"`
	Sandbox  string    `json:"sandbox"`
	Host     string    `json:"host"`
	Port     int       `json:"port"`
	Decision string    `json:"decision"` // allow | deny
	Reason   string    `json:"reason"`   // "rule r2: deny x", "preset balanced", "org governance", …
}

// maxLogOutput bounds what `policy log` may print; only the newest entries matter.
const maxLogOutput = 8 << 20

// PolicyLog returns the proxy's decisions for a sandbox (`sbx policy log SANDBOX
// --json`), oldest first.
func (c *Client) PolicyLog(ctx context.Context, sandbox string) ([]Decision, error) {
	if err := ValidateName(sandbox); err != nil {
		return nil, err
	}
	if err := c.hasPolicy(ctx); err != nil {
		return nil, err
	}
	res, err := c.run(ctx, call{op: "policy log", sandbox: sandbox, args: []string{"policy", "log", sandbox, "--json"}, maxOut: maxLogOutput})
	if err != nil {
		return nil, err
	}
	var out struct {
		Entries []Decision `json:"entries"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(res.stdout), &out); err != nil {
		return nil, &Error{Op: "policy log", Sandbox: sandbox, Err: fmt.Errorf("%w: %v", ErrOutput, err)}
	}
	return out.Entries, nil
}

// maxDenied bounds how many denied destinations one line names.
const maxDenied = 5

// DeniedLine is the one line appended to a command's result when the proxy denied
// connections from its sandbox since `since`: each denied host:port once (the first
// maxDenied, then a count), with what denied it, and the command that allows them. It
// is "" when nothing was denied.
func DeniedLine(log []Decision, sandbox string, since time.Time) string {
	type dest struct{ host, reason string }
	var order []string
	seen := map[string]dest{}
	for _, d := range log {
		if d.Decision != "deny" || d.Sandbox != "" && d.Sandbox != sandbox || d.Time.Before(since) {
			continue
		}
		key := d.Host + ":" + strconv.Itoa(d.Port)
		if _, ok := seen[key]; ok {
			continue
		}
		seen[key] = dest{host: d.Host, reason: d.Reason}
		order = append(order, key)
	}
	if len(order) == 0 {
		return ""
	}
	var parts, hosts []string
	for i, key := range order {
		if i == maxDenied {
			parts = append(parts, fmt.Sprintf("and %d more", len(order)-maxDenied))
			break
		}
		d := seen[key]
		parts = append(parts, fmt.Sprintf("%s (%s)", key, clip(d.reason, 80)))
		if !containsString(hosts, d.host) && ValidHostPattern(d.host) == nil {
			hosts = append(hosts, d.host)
		}
	}
	line := "[sandbox network] denied: " + strings.Join(parts, ", ")
	if len(hosts) > 0 {
		line += "; allow with: pi-sbx-backend allow " + strings.Join(hosts, " ")
	}
	return line
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
