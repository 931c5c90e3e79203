//go:build linux

package sbxsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
)

// errNoPreset is the refusal of a sandbox start before any preset was chosen, where
// the prompt cannot be shown (no terminal, or --no-input).
var errNoPreset = errors.New("no network policy chosen: run 'sbx policy init balanced' (or allow-all, deny-all) first")

// presetGate is what create and run do first at 0.55: with no preset chosen sbx asks
// for one; without a terminal or with --no-input it fails naming the command.
func (c *cli) presetGate(ctx context.Context) error {
	if !c.atLeast(V055) {
		return nil
	}
	p, err := c.m.Store.LoadPolicy()
	if err != nil || p.Preset != "" {
		return err
	}
	if !c.interactive() {
		return errNoPreset
	}
	fmt.Fprint(c.env.Stderr, "Choose a network policy for your sandboxes:\n  1) Open (allow-all)\n  2) Balanced\n  3) Locked Down (deny-all)\nChoice [1-3]: ")
	var answer string
	_, _ = fmt.Fscanln(c.env.Stdin, &answer)
	preset := map[string]string{"1": presetAllowAll, "2": presetBalanced, "3": presetDenyAll}[strings.TrimSpace(answer)]
	if preset == "" {
		return errors.New("declined")
	}
	return c.setPreset(ctx, preset)
}

func (c *cli) setPreset(ctx context.Context, preset string) error {
	switch preset {
	case presetAllowAll, presetBalanced, presetDenyAll:
	default:
		return fmt.Errorf("invalid preset %q: must be one of allow-all, balanced, deny-all", preset)
	}
	if err := c.m.Store.UpdatePolicy(ctx, func(p *Policy) error { p.Preset = preset; return nil }); err != nil {
		return err
	}
	c.m.Store.daemonLogf("policy: preset %s", preset)
	return nil
}

// policy is `sbx policy …` (sbx ≥ 0.55).
func (c *cli) policy(ctx context.Context, args []string) error {
	fs, err := parseFlags(c.flagsOf("policy"), args, true)
	if err != nil {
		return err
	}
	if len(fs.args) == 0 {
		return errors.New(`"sbx policy" requires a subcommand: init, allow, deny, rm, ls, check, log, inspect or reset`)
	}
	sub, rest := fs.args[0], fs.args[1:]
	network := func() error {
		if len(rest) == 0 || rest[0] != "network" {
			return fmt.Errorf(`"sbx policy %s" requires the resource type network`, sub)
		}
		rest = rest[1:]
		return nil
	}
	switch sub {
	case "init", "set-default":
		if len(rest) != 1 {
			return fmt.Errorf(`"sbx policy %s" requires exactly 1 argument: allow-all, balanced or deny-all`, sub)
		}
		if err := c.setPreset(ctx, rest[0]); err != nil {
			return err
		}
		fmt.Fprintf(c.env.Stdout, "Network policy initialized: %s\n", rest[0])
		return nil
	case "allow", "deny":
		if err := network(); err != nil {
			return err
		}
		return c.policyAdd(ctx, sub, fs, splitHosts(rest))
	case "rm":
		if err := network(); err != nil {
			return err
		}
		return c.policyRemove(ctx, fs)
	case "ls":
		return c.policyList(fs, rest)
	case "check":
		if err := network(); err != nil {
			return err
		}
		return c.policyCheck(fs, rest)
	case "log":
		return c.policyLogCmd(fs, rest)
	case "inspect":
		return c.policyInspect()
	case "reset":
		return c.policyReset(ctx)
	}
	return fmt.Errorf("unknown command %q for \"sbx policy\"", sub)
}

func (c *cli) policyAdd(ctx context.Context, action string, fs flagSet, hosts []string) error {
	if len(hosts) == 0 {
		return fmt.Errorf(`"sbx policy %s network" requires at least 1 host`, action)
	}
	if proto := fs.last("protocol"); proto != "" && proto != "tcp" {
		return fmt.Errorf("invalid --protocol %q: sbxsim's proxy handles tcp only", proto)
	}
	sandbox := fs.last("sandbox")
	if sandbox != "" {
		if err := validateName(sandbox); err != nil {
			return err
		}
	}
	var pats []pattern
	for _, h := range hosts {
		p, err := parsePattern(h)
		if err != nil {
			return err
		}
		pats = append(pats, p)
	}
	var added []Rule
	err := c.m.Store.UpdatePolicy(ctx, func(p *Policy) error {
		if sandbox != "" && action == "allow" {
			// A per-sandbox allow only narrows a deny-all host policy, and never by
			// CIDR (docs/sbxsim.md: TP's provider refuses both).
			for _, pt := range pats {
				if pt.prefix.IsValid() {
					return fmt.Errorf("a per-sandbox allow rule cannot be a CIDR (%s): allow it globally", pt.host)
				}
			}
			if p.Preset != presetDenyAll {
				return errors.New("a per-sandbox allow rule only narrows the deny-all preset; run 'sbx policy init deny-all' or allow globally")
			}
		}
		for _, h := range hosts {
			p.NextID++
			r := Rule{ID: "r" + strconv.Itoa(p.NextID), Action: action, Type: "network", Resource: strings.ToLower(h),
				Sandbox: sandbox, Protocol: "tcp", Method: fs.last("method"), Path: fs.last("path"), Source: "local", Active: true}
			p.Rules = append(p.Rules, r)
			added = append(added, r)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range added {
		scope := ""
		if r.Sandbox != "" {
			scope = " (sandbox " + r.Sandbox + ")"
		}
		fmt.Fprintf(c.env.Stdout, "Added rule %s: %s %s%s\n", r.ID, r.Action, r.Resource, scope)
		c.m.Store.daemonLogf("policy: added %s: %s %s%s", r.ID, r.Action, r.Resource, scope)
	}
	return nil
}

func (c *cli) policyRemove(ctx context.Context, fs flagSet) error {
	id, res, sandbox := fs.last("id"), strings.ToLower(fs.last("resource")), fs.last("sandbox")
	if id == "" && res == "" {
		return errors.New(`"sbx policy rm network" requires --id ID or --resource PATTERN`)
	}
	var removed []Rule
	err := c.m.Store.UpdatePolicy(ctx, func(p *Policy) error {
		var keep []Rule
		for _, r := range p.Rules {
			hit := (id == "" || r.ID == id) && (res == "" || r.Resource == res) && (!fs.has("sandbox") || r.Sandbox == sandbox)
			if hit {
				removed = append(removed, r)
			} else {
				keep = append(keep, r)
			}
		}
		if len(removed) == 0 {
			return errors.New("no rule matches")
		}
		p.Rules = keep
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range removed {
		fmt.Fprintf(c.env.Stdout, "Removed rule %s: %s %s\n", r.ID, r.Action, r.Resource)
	}
	return nil
}

// policyView is `policy ls --json` (shape assumed).
type policyView struct {
	Preset        string `json:"preset"`
	OrgGovernance bool   `json:"org_governance"`
	Rules         []Rule `json:"rules"`
}

func (c *cli) policyList(fs flagSet, rest []string) error {
	if len(rest) > 1 {
		return errors.New(`"sbx policy ls" takes at most 1 argument (a sandbox)`)
	}
	sandbox := ""
	if len(rest) == 1 {
		sandbox = rest[0]
		if _, err := c.m.Store.Load(sandbox); err != nil {
			return err
		}
	}
	source := fs.last("source")
	switch source {
	case "", "local", "org", "kit", "preset":
	default:
		return fmt.Errorf("invalid --source %q: must be one of local, org, kit", source)
	}
	p, err := c.m.Store.LoadPolicy()
	if err != nil {
		return err
	}
	o := c.m.Store.LoadOrg()
	v := policyView{Preset: p.Preset, OrgGovernance: o.Active, Rules: []Rule{}}
	for _, r := range effectiveRules(p, o, sandbox) {
		if source == "" && r.Source == "preset" || source != "" && r.Source != source || !r.Active && !fs.has("include-inactive") {
			continue
		}
		v.Rules = append(v.Rules, r)
	}
	if fs.has("json") {
		return c.printJSON(v)
	}
	preset := v.Preset
	if preset == "" {
		preset = "(none: run 'sbx policy init')"
	}
	fmt.Fprintf(c.env.Stdout, "Preset: %s\n", preset)
	if v.OrgGovernance {
		fmt.Fprintln(c.env.Stdout, "Org governance: active (local allow rules inactive)")
	}
	tw := tabwriter.NewWriter(c.env.Stdout, 0, 8, 2, ' ', 0)
	if fs.has("wide") {
		fmt.Fprintln(tw, "ID\tACTION\tRESOURCE\tSANDBOX\tSOURCE\tPROTOCOL\tACTIVE")
	} else {
		fmt.Fprintln(tw, "ID\tACTION\tRESOURCE\tSANDBOX\tSOURCE")
	}
	for _, r := range v.Rules {
		sb := r.Sandbox
		if sb == "" {
			sb = "*"
		}
		if fs.has("wide") {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%t\n", r.ID, r.Action, r.Resource, sb, r.Source, r.Protocol, r.Active)
		} else {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.Action, r.Resource, sb, r.Source)
		}
	}
	return tw.Flush()
}

// checkResult is `policy check --json` (shape assumed).
type checkResult struct {
	Host     string `json:"host"`
	Port     int    `json:"port"`
	Sandbox  string `json:"sandbox"`
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Rule     *Rule  `json:"rule"`
}

func (c *cli) policyCheck(fs flagSet, rest []string) error {
	if len(rest) != 1 {
		return errors.New(`"sbx policy check network" requires exactly 1 argument: HOST[:PORT]`)
	}
	host, port := rest[0], 443
	if h, ps, err := net.SplitHostPort(rest[0]); err == nil {
		n, err := strconv.Atoi(ps)
		if err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("invalid port in %q", rest[0])
		}
		host, port = h, n
	}
	if _, err := parsePattern(host); err != nil || strings.ContainsAny(host, "*/") {
		return fmt.Errorf("invalid target %q: want HOST[:PORT]", rest[0])
	}
	sandbox := fs.last("sandbox")
	p, err := c.m.Store.LoadPolicy()
	if err != nil {
		return err
	}
	d := decide(p, c.m.Store.LoadOrg(), sandbox, strings.ToLower(host), port, !c.atLeast(V055))
	r := checkResult{Host: strings.ToLower(host), Port: port, Sandbox: sandbox, Decision: "deny", Reason: d.Reason, Rule: d.Rule}
	if d.Allow {
		r.Decision = "allow"
	}
	if fs.has("json") {
		return c.printJSON(r)
	}
	word := "denied"
	if d.Allow {
		word = "allowed"
	}
	fmt.Fprintf(c.env.Stdout, "%s: %s (%s)\n", word, net.JoinHostPort(r.Host, strconv.Itoa(port)), d.Reason)
	return nil
}

func (c *cli) policyLogCmd(fs flagSet, rest []string) error {
	if len(rest) > 1 {
		return errors.New(`"sbx policy log" takes at most 1 argument (a sandbox)`)
	}
	sandbox := ""
	if len(rest) == 1 {
		sandbox = rest[0]
	}
	entries, err := c.m.Store.readLog(sandbox)
	if err != nil {
		return err
	}
	if fs.has("json") {
		return c.printJSON(struct {
			Entries []LogEntry `json:"entries"`
		}{entries})
	}
	tw := tabwriter.NewWriter(c.env.Stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tSANDBOX\tDESTINATION\tDECISION\tREASON")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Time.Format("2006-01-02T15:04:05Z07:00"), e.Sandbox,
			net.JoinHostPort(e.Host, strconv.Itoa(e.Port)), e.Decision, e.Reason)
	}
	return tw.Flush()
}

func (c *cli) policyInspect() error {
	p, err := c.m.Store.LoadPolicy()
	if err != nil {
		return err
	}
	o := c.m.Store.LoadOrg()
	rules := p.Rules
	if rules == nil {
		rules = []Rule{}
	}
	orgRules := []Rule{}
	for _, r := range effectiveRules(Policy{}, o, "") {
		orgRules = append(orgRules, r)
	}
	return c.printJSON(struct {
		Preset        string         `json:"preset"`
		OrgGovernance bool           `json:"org_governance"`
		OrgRules      []Rule         `json:"org_rules"`
		Rules         []Rule         `json:"rules"`
		Proxy         map[string]int `json:"proxy"`
	}{p.Preset, o.Active, orgRules, rules, map[string]int{"port": egressPort}})
}

// policyReset forgets the preset, the local rules and the log, and restarts the daemon
// (which stops every running sandbox), as sbx's reset does.
func (c *cli) policyReset(ctx context.Context) error {
	if err := c.m.Store.UpdatePolicy(ctx, func(p *Policy) error { *p = Policy{}; return nil }); err != nil {
		return err
	}
	if err := os.Remove(c.m.Store.policyLog()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	fmt.Fprintln(c.env.Stdout, "Network policy reset")
	return c.daemon(ctx, []string{"restart"})
}

// printJSON writes v indented, as sbx's --json does.
func (c *cli) printJSON(v any) error {
	enc := json.NewEncoder(c.env.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
