//go:build linux

package sbxsim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The network policy as sbx keeps it (docs/sbxsim.md): a preset, local rules (global or
// for one sandbox), org rules when org governance is active, and a log of every
// decision the egress proxy made. It lives in the state directory, written under
// policy.lock and replaced atomically, so the proxy reads it at every connection.

// Presets, as `policy init` names them.
const (
	presetAllowAll = "allow-all"
	presetBalanced = "balanced"
	presetDenyAll  = "deny-all"
)

// balancedHosts are the balanced preset's allowed hosts: package registries, source
// hosting and model APIs a coding agent needs (sbx's list is not published; this one is
// sbxsim's).
var balancedHosts = []string{
	"github.com", "*.github.com", "*.githubusercontent.com",
	"registry.npmjs.org", "*.npmjs.org", "pypi.org", "files.pythonhosted.org",
	"proxy.golang.org", "sum.golang.org", "crates.io", "*.crates.io",
	"deb.debian.org", "*.docker.io", "*.docker.com",
	"api.anthropic.com", "api.openai.com",
}

// Rule is one network rule, in `policy ls --json`'s shape (assumed: sbx's is
// undocumented).
type Rule struct {
	ID       string `json:"id"`
	Action   string `json:"action"` // allow or deny
	Type     string `json:"type"`   // network
	Resource string `json:"resource"`
	Sandbox  string `json:"sandbox"` // "" = every sandbox
	Protocol string `json:"protocol"`
	Method   string `json:"method,omitempty"`
	Path     string `json:"path,omitempty"`
	Source   string `json:"source"` // local, org or preset
	Active   bool   `json:"active"`
}

// Policy is the local policy file.
type Policy struct {
	Preset string `json:"preset"` // "" = none chosen
	Rules  []Rule `json:"rules"`
	NextID int    `json:"nextID"`
}

// OrgPolicy is the simulated organisation policy (SBXSIM_ORG_POLICY).
type OrgPolicy struct {
	Active bool     `json:"active"`
	Allow  []string `json:"allow"`
}

func (st Store) policyFile() string { return filepath.Join(st.Root, "policy.json") }
func (st Store) orgFile() string    { return filepath.Join(st.Root, "org-policy.json") }
func (st Store) policyLog() string  { return filepath.Join(st.Root, "policy-log.jsonl") }

// LoadPolicy reads the local policy; a fresh state has no preset and no rules.
func (st Store) LoadPolicy() (Policy, error) {
	var p Policy
	b, err := os.ReadFile(st.policyFile())
	if errors.Is(err, os.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return p, fmt.Errorf("reading the network policy: %w", err)
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("parsing the network policy: %w", err)
	}
	return p, nil
}

// LoadOrg reads the org policy (inactive when never set).
func (st Store) LoadOrg() OrgPolicy {
	var o OrgPolicy
	if b, err := os.ReadFile(st.orgFile()); err == nil {
		_ = json.Unmarshal(b, &o)
	}
	return o
}

// writeJSON replaces path atomically.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// UpdatePolicy changes the local policy under its lock.
func (st Store) UpdatePolicy(ctx context.Context, f func(*Policy) error) error {
	if err := os.MkdirAll(st.Root, 0o700); err != nil {
		return fmt.Errorf("creating state directory: %w", err)
	}
	lf, err := os.OpenFile(filepath.Join(st.Root, "policy.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("locking the network policy: %w", err)
	}
	defer lf.Close()
	if err := flockCtx(ctx, lf); err != nil {
		return fmt.Errorf("locking the network policy: %w", err)
	}
	p, err := st.LoadPolicy()
	if err != nil {
		return err
	}
	if err := f(&p); err != nil {
		return err
	}
	if err := writeJSON(st.policyFile(), p); err != nil {
		return fmt.Errorf("writing the network policy: %w", err)
	}
	return nil
}

// syncOrgPolicy records SBXSIM_ORG_POLICY when the caller sets it: on, off, or the
// org's allowed hosts (which make it active).
func (c *cli) syncOrgPolicy() error {
	v, ok := c.env.LookupEnv("SBXSIM_ORG_POLICY")
	if !ok {
		return nil
	}
	o := OrgPolicy{}
	switch v = strings.TrimSpace(v); v {
	case "off", "":
	case "on":
		o.Active = true
	default:
		o.Active = true
		for _, h := range splitHosts([]string{v}) {
			if _, err := parsePattern(h); err != nil {
				return fmt.Errorf("SBXSIM_ORG_POLICY: %w", err)
			}
			o.Allow = append(o.Allow, h)
		}
	}
	if err := c.ensureStateRoot(); err != nil {
		return err
	}
	return writeJSON(c.m.Store.orgFile(), o)
}

// pattern is a parsed rule resource: a host pattern and a port (0 = every port).
type pattern struct {
	host   string // "**", "*.x", a name or an IP
	prefix netip.Prefix
	port   int
}

// parsePattern parses HOST[:PORT] where HOST is **, *.domain, a name, an IP or a CIDR.
func parsePattern(s string) (pattern, error) {
	var p pattern
	h := strings.ToLower(strings.TrimSpace(s))
	if i := strings.LastIndexByte(h, ':'); i >= 0 && strings.Count(h, ":") == 1 {
		n, err := strconv.Atoi(h[i+1:])
		if err != nil || n < 1 || n > 65535 {
			return p, fmt.Errorf("invalid port in %q", s)
		}
		h, p.port = h[:i], n
	}
	switch {
	case h == "":
		return p, fmt.Errorf("empty host in %q", s)
	case h == "**":
	case strings.Contains(h, "/"):
		pre, err := netip.ParsePrefix(h)
		if err != nil {
			return p, fmt.Errorf("invalid CIDR %q", s)
		}
		p.prefix = pre.Masked()
	case strings.HasPrefix(h, "*."):
		if !validHostname(h[2:]) {
			return p, fmt.Errorf("invalid host pattern %q", s)
		}
	default:
		if _, err := netip.ParseAddr(h); err != nil && !validHostname(h) {
			return p, fmt.Errorf("invalid host %q", s)
		}
	}
	p.host = h
	return p, nil
}

func validHostname(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, l := range strings.Split(h, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

// matches reports whether the pattern covers host:port: `*.x` and `x` do not cover
// each other, `**` covers every host, a CIDR only IP destinations inside it.
func (p pattern) matches(host string, port int) bool {
	if p.port != 0 && p.port != port {
		return false
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	switch {
	case p.host == "**":
		return true
	case p.prefix.IsValid():
		a, err := netip.ParseAddr(host)
		return err == nil && p.prefix.Contains(a.Unmap())
	case strings.HasPrefix(p.host, "*."):
		return strings.HasSuffix(host, p.host[1:]) && len(host) > len(p.host)-1
	}
	return host == p.host
}

// ruleMatches reports whether a rule covers host:port (an unparsable rule covers nothing).
func ruleMatches(r Rule, host string, port int) bool {
	p, err := parsePattern(r.Resource)
	return err == nil && p.matches(host, port)
}

// Decision is the policy's answer for one connection.
type Decision struct {
	Allow  bool
	Reason string // "rule r2: deny x", "preset balanced", "org governance", "no preset"
	Rule   *Rule
}

// presetRules are the preset's own allow rules (only balanced has any).
func presetRules(preset string) []Rule {
	if preset != presetBalanced {
		return nil
	}
	var out []Rule
	for i, h := range balancedHosts {
		out = append(out, Rule{ID: "preset-" + strconv.Itoa(i+1), Action: "allow", Type: "network", Resource: h,
			Protocol: "tcp", Source: "preset", Active: true})
	}
	return out
}

// effectiveRules are the rules that apply to sandbox ("" = the global view), each with
// Active set: under org governance local allow rules and the preset are inactive and
// the org's allow rules apply.
func effectiveRules(p Policy, o OrgPolicy, sandbox string) []Rule {
	var out []Rule
	for _, r := range p.Rules {
		if r.Sandbox != "" && sandbox != "" && r.Sandbox != sandbox {
			continue
		}
		r.Active = !(o.Active && r.Action == "allow")
		out = append(out, r)
	}
	if o.Active {
		for i, h := range o.Allow {
			out = append(out, Rule{ID: "org-" + strconv.Itoa(i+1), Action: "allow", Type: "network", Resource: h,
				Protocol: "tcp", Source: "org", Active: true})
		}
	}
	for _, r := range presetRules(p.Preset) {
		r.Active = !o.Active
		out = append(out, r)
	}
	return out
}

// decide applies the policy to a connection from sandbox to host:port: a matching
// deny rule wins, then a matching allow rule, then the preset. openWithoutPreset is
// for sbx before 0.55, which had no preset prompt.
func decide(p Policy, o OrgPolicy, sandbox, host string, port int, openWithoutPreset bool) Decision {
	rules := effectiveRules(p, o, sandbox)
	for _, action := range []string{"deny", "allow"} {
		for i := range rules {
			r := rules[i]
			if r.Active && r.Action == action && (r.Sandbox == "" || r.Sandbox == sandbox) && ruleMatches(r, host, port) {
				reason := fmt.Sprintf("rule %s: %s %s", r.ID, r.Action, r.Resource)
				if r.Source == "preset" {
					reason = "preset " + p.Preset
				}
				return Decision{Allow: action == "allow", Reason: reason, Rule: &r}
			}
		}
	}
	switch {
	case o.Active:
		return Decision{Reason: "org governance"}
	case p.Preset == presetAllowAll:
		return Decision{Allow: true, Reason: "preset allow-all"}
	case p.Preset == "":
		return Decision{Allow: openWithoutPreset, Reason: "no preset"}
	}
	return Decision{Reason: "preset " + p.Preset}
}

// LogEntry is one decision in `policy log --json` (shape assumed).
type LogEntry struct {
	Time     time.Time `json:"time"`
	Sandbox  string    `json:"sandbox"`
	Host     string    `json:"host"`
	Port     int       `json:"port"`
	IP       string    `json:"ip,omitempty"`
	Decision string    `json:"decision"` // allow or deny
	Reason   string    `json:"reason"`
	RuleID   string    `json:"rule_id,omitempty"`
	Source   string    `json:"source,omitempty"`
	Preset   string    `json:"preset"`
	// Shape is how the sandbox saw a denial: http-403, reset; "" when allowed.
	Shape string `json:"shape"`
}

// appendLog adds an entry to the policy log: one write of one line with O_APPEND, so
// concurrent proxies never interleave within an entry.
func (st Store) appendLog(e LogEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(st.policyLog(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("writing the policy log: %w", err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err == nil {
		defer unix.Flock(int(f.Fd()), unix.LOCK_UN)
	}
	if _, err = f.Write(append(b, '\n')); err != nil {
		return err
	}
	return trimLog(f, maxPolicyLog)
}

// maxPolicyLog bounds the policy log: past it, the oldest half goes (a sandbox that
// retries a denied host forever must not fill the disk, nor outgrow what a reader of
// `policy log` accepts).
const maxPolicyLog = 4 << 20

// trimLog keeps the newest half of the locked log f once it is larger than max,
// cutting at a line boundary.
func trimLog(f *os.File, max int64) error {
	fi, err := f.Stat()
	if err != nil || fi.Size() <= max {
		return err
	}
	b := make([]byte, max/2)
	n, err := f.ReadAt(b, fi.Size()-int64(len(b)))
	if err != nil && n < len(b) {
		return fmt.Errorf("trimming the policy log: %w", err)
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("trimming the policy log: %w", err)
	}
	_, err = f.Write(b) // O_APPEND: at the new end, 0
	return err
}

// readLog returns the policy log's entries for sandbox ("" = all), oldest first.
func (st Store) readLog(sandbox string) ([]LogEntry, error) {
	out := []LogEntry{}
	f, err := os.Open(st.policyLog())
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the policy log: %w", err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err == nil { // not while it is trimmed
		defer unix.Flock(int(f.Fd()), unix.LOCK_UN)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var e LogEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if sandbox == "" || e.Sandbox == sandbox {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}

// splitHosts splits "h1,h2" arguments into hosts.
func splitHosts(args []string) []string {
	var out []string
	for _, a := range args {
		for _, h := range strings.Split(a, ",") {
			if h = strings.TrimSpace(h); h != "" {
				out = append(out, h)
			}
		}
	}
	return out
}
