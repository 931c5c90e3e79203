//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// These tests prove sbxsim plays sbx 0.55 (docs/sbxsim.md): the argv each version
// accepts, the prompts and --no-input, the network policy and its egress proxy.

const v055 = "SBXSIM_VERSION=0.55.0"

// at runs sbxsim playing version with extra environment.
func (s *sim) at(version string, env []string, args ...string) result {
	s.t.Helper()
	return s.runWith(append([]string{"SBXSIM_VERSION=" + version}, env...), "", args...)
}

// refused reports whether sbx refused the argv itself (cobra's unknown command/flag).
func refused(r result) bool {
	return r.code != 0 && (strings.Contains(r.stderr, "unknown command") || strings.Contains(r.stderr, "unknown flag") || strings.Contains(r.stderr, "unknown shorthand flag"))
}

// TestArgvPerVersion: each version accepts exactly its verbs and flags; what a version
// lacks is refused as cobra refuses it.
func TestArgvPerVersion(t *testing.T) {
	s := newSim(t, false)
	type row struct {
		argv  []string
		since string // first version that accepts it ("" = all)
	}
	rows := []row{
		{[]string{"version"}, ""},
		{[]string{"version", "--json"}, "0.42.0"},
		{[]string{"ls", "--json"}, ""},
		{[]string{"ports", "nosuch"}, ""},
		{[]string{"--no-input", "version"}, "0.55.0"},
		{[]string{"-D", "version"}, ""},
		{[]string{"port", "ls", "nosuch"}, "0.55.0"},
		{[]string{"inspect", "nosuch", "--json"}, "0.55.0"},
		{[]string{"policy", "ls", "--json"}, "0.55.0"},
		{[]string{"df", "--json"}, "0.55.0"},
		{[]string{"daemon", "logs", "-n", "1"}, "0.55.0"},
		{[]string{"settings", "list", "--json"}, "0.55.0"},
		{[]string{"settings", "list"}, ""},
		{[]string{"create", "--pull", "missing", "--name", "x", "nosuchagent"}, "0.46.0"},
	}
	versions := []string{"0.42.0", "0.46.0", "0.53.0", "0.55.0"}
	for _, v := range versions {
		for _, r := range rows {
			want := r.since == "" || versionAtLeast(v, r.since)
			got := s.at(v, nil, r.argv...)
			if refused(got) == want {
				t.Errorf("v%s %v: accepted=%v, want %v (%s)", v, r.argv, !refused(got), want, got)
			}
		}
	}
	// The ls text gained a PORTS column in 0.55.
	for v, want := range map[string]bool{"0.53.0": false, "0.55.0": true} {
		if got := strings.Contains(s.at(v, nil, "ls").stdout, "PORTS"); got != want {
			t.Errorf("v%s ls has PORTS: %v, want %v", v, got, want)
		}
	}
}

func versionAtLeast(v, min string) bool {
	var a, b [3]int
	fmt.Sscanf(v, "%d.%d.%d", &a[0], &a[1], &a[2])
	fmt.Sscanf(min, "%d.%d.%d", &b[0], &b[1], &b[2])
	for i := range a {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return true
}

// TestPromptsWithoutATerminal: at 0.55 a fresh state has no preset, and create fails
// (no terminal, or --no-input) naming `sbx policy init`, creating nothing; rm without
// --force fails naming --force. 0.53 has neither prompt.
func TestPromptsWithoutATerminal(t *testing.T) {
	s := newFreshSim(t, false)
	ws := t.TempDir()
	name := s.name("prompt")
	for _, argv := range [][]string{
		{"create", "--name", name, "shell", ws},
		{"--no-input", "create", "--name", name, "shell", ws},
		{"--no-input", "run", "-d", "--name", name, "shell", ws},
	} {
		r := s.at("0.55.0", nil, argv...)
		if r.code != 1 || !strings.Contains(r.stderr, "sbx policy init balanced") {
			t.Errorf("%v with no preset: %s; want exit 1 naming sbx policy init", argv, r)
		}
	}
	if ls := s.at("0.55.0", nil, "ls", "-q"); ls.stdout != "" {
		t.Fatalf("a refused create left %q", ls.stdout)
	}
	// 0.53 had no prompt; at 0.55 a chosen preset lets create through.
	if r := s.at("0.53.0", nil, "create", "-q", "--name", name+"-53", "shell", ws); r.code != 0 {
		t.Errorf("0.53 create with no preset: %s", r)
	}
	if r := s.at("0.55.0", nil, "policy", "init", "balanced"); r.code != 0 || r.stdout != "Network policy initialized: balanced\n" {
		t.Fatal(r)
	}
	if r := s.at("0.55.0", nil, "--no-input", "create", "-q", "--name", name, "shell", ws); r.code != 0 {
		t.Errorf("create after policy init: %s", r)
	}
}

// TestRmNeedsForceWithoutATerminal: rm's confirmation at 0.55.
func TestRmNeedsForceWithoutATerminal(t *testing.T) {
	s := newSim(t, false)
	if r := s.at("0.55.0", nil, "policy", "init", "allow-all"); r.code != 0 {
		t.Fatal(r)
	}
	name := s.name("rm")
	if r := s.at("0.55.0", nil, "create", "-q", "--name", name, "shell", t.TempDir()); r.code != 0 {
		t.Fatal(r)
	}
	cases := []struct {
		argv []string
		want string
	}{
		{[]string{"rm", name}, "stdin is not a terminal; use --force"},
		{[]string{"--no-input", "rm", name}, "run 'sbx rm --force " + name + "'"},
	}
	for _, c := range cases {
		if r := s.at("0.55.0", nil, c.argv...); r.code != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: %s; want exit 1 with %q", c.argv, r, c.want)
		}
	}
	if r := s.at("0.55.0", nil, "rm", "--force", name); r.code != 0 {
		t.Errorf("rm --force: %s", r)
	}
}

// checkResult is `policy check --json`.
type checkResult struct {
	Host     string `json:"host"`
	Port     int    `json:"port"`
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Rule     *struct {
		ID     string `json:"id"`
		Source string `json:"source"`
	} `json:"rule"`
}

// TestPolicyRulesAndPatterns: presets, patterns (`*.x` and `x` apart, `**`, CIDR,
// ports), per-sandbox rules, deny wins, org governance — through `policy check`.
func TestPolicyRulesAndPatterns(t *testing.T) {
	s := newSim(t, false)
	p := func(env []string, args ...string) result {
		t.Helper()
		r := s.at("0.55.0", env, append([]string{"policy"}, args...)...)
		if r.code != 0 {
			t.Fatalf("policy %v: %s", args, r)
		}
		return r
	}
	check := func(env []string, target string, sandbox string) checkResult {
		t.Helper()
		args := []string{"check", "network", "--json", target}
		if sandbox != "" {
			args = append(args, "--sandbox", sandbox)
		}
		var c checkResult
		if err := json.Unmarshal([]byte(p(env, args...).stdout), &c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	p(nil, "init", "deny-all")
	p(nil, "allow", "network", "*.example.com,api.test:8080", "10.0.0.0/8")
	p(nil, "deny", "network", "bad.example.com", "10.1.0.0/16")
	p(nil, "allow", "network", "--sandbox", "sb1", "only1.test")
	cases := []struct {
		target, sandbox, decision, reason string
	}{
		{"example.com", "", "deny", "preset deny-all"},                 // *.x does not cover x
		{"a.example.com", "", "allow", "rule r1: allow *.example.com"}, // …but its subdomains
		{"a.b.example.com:80", "", "allow", "rule r1: allow *.example.com"},
		{"bad.example.com", "", "deny", "rule r4: deny bad.example.com"}, // deny wins
		{"api.test:8080", "", "allow", "rule r2: allow api.test:8080"},
		{"api.test", "", "deny", "preset deny-all"}, // bare = 443
		{"10.2.3.4:22", "", "allow", "rule r3: allow 10.0.0.0/8"},
		{"10.1.2.3", "", "deny", "rule r5: deny 10.1.0.0/16"},
		{"only1.test", "sb1", "allow", "rule r6: allow only1.test"},
		{"only1.test", "sb2", "deny", "preset deny-all"},
		{"only1.test", "", "deny", "preset deny-all"},
	}
	for _, c := range cases {
		got := check(nil, c.target, c.sandbox)
		if got.Decision != c.decision || got.Reason != c.reason {
			t.Errorf("check %s (sandbox %q): %s (%s), want %s (%s)", c.target, c.sandbox, got.Decision, got.Reason, c.decision, c.reason)
		}
	}
	// Refusals: a per-sandbox CIDR allow, a per-sandbox allow outside deny-all.
	if r := s.at("0.55.0", nil, "policy", "allow", "network", "--sandbox", "sb1", "10.0.0.0/8"); r.code != 1 || !strings.Contains(r.stderr, "CIDR") {
		t.Errorf("per-sandbox CIDR allow: %s", r)
	}
	// ** denies everything; removing it by resource restores the rest.
	p(nil, "deny", "network", "**")
	if c := check(nil, "a.example.com", ""); c.Decision != "deny" || c.Rule == nil || c.Rule.ID != "r7" {
		t.Errorf("after deny **: %+v", c)
	}
	p(nil, "rm", "network", "--resource", "**")
	// Org governance: local allows inactive, org allows and local denies decide.
	org := []string{"SBXSIM_ORG_POLICY=a.example.com,org.test"}
	for _, c := range []struct{ target, decision, reason string }{
		{"a.example.com", "allow", "rule org-1: allow a.example.com"},
		{"x.example.com", "deny", "org governance"},
		{"bad.example.com", "deny", "rule r4: deny bad.example.com"},
		{"org.test", "allow", "rule org-2: allow org.test"},
	} {
		if got := check(org, c.target, ""); got.Decision != c.decision || got.Reason != c.reason {
			t.Errorf("org governance, check %s: %s (%s), want %s (%s)", c.target, got.Decision, got.Reason, c.decision, c.reason)
		}
	}
	var ls struct {
		OrgGovernance bool `json:"org_governance"`
		Rules         []struct {
			ID     string `json:"id"`
			Active bool   `json:"active"`
		} `json:"rules"`
	}
	if err := json.Unmarshal([]byte(p(nil, "ls", "--json", "--include-inactive").stdout), &ls); err != nil {
		t.Fatal(err)
	}
	inactive := 0
	for _, r := range ls.Rules {
		if !r.Active {
			inactive++
		}
	}
	if !ls.OrgGovernance || inactive != 4 { // r1 r2 r3 r6
		t.Errorf("ls under org governance: %+v, want 4 inactive local allows", ls)
	}
	p([]string{"SBXSIM_ORG_POLICY=off"}, "ls")
	// Balanced: its built-in hosts, nothing else; a per-sandbox allow is refused there.
	p(nil, "init", "balanced")
	for target, want := range map[string]string{"github.com": "allow", "registry.npmjs.org": "allow", "evil.test": "deny"} {
		if got := check(nil, target, ""); got.Decision != want {
			t.Errorf("balanced, check %s: %+v, want %s", target, got, want)
		}
	}
	if r := s.at("0.55.0", nil, "policy", "allow", "network", "--sandbox", "sb1", "x.test"); r.code != 1 || !strings.Contains(r.stderr, "deny-all") {
		t.Errorf("per-sandbox allow under balanced: %s", r)
	}
	// reset forgets the preset and the local rules.
	p(nil, "reset")
	var after struct {
		Preset string            `json:"preset"`
		Rules  []json.RawMessage `json:"rules"`
	}
	if err := json.Unmarshal([]byte(p(nil, "ls", "--json", "--include-inactive").stdout), &after); err != nil || after.Preset != "" || len(after.Rules) != 0 {
		t.Errorf("after policy reset: %+v %v", after, err)
	}
}

// echoServer accepts TCP connections on loopback and echoes what it reads.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				fmt.Fprint(c, "echo:"+line)
			}()
		}
	}()
	return ln.Addr().String()
}

// logEntry is one `policy log --json` entry.
type logEntry struct {
	Sandbox  string `json:"sandbox"`
	Host     string `json:"host"`
	Port     int    `json:"port"`
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	RuleID   string `json:"rule_id"`
	Shape    string `json:"shape"`
}

// TestEgressThroughTheProxy: test hosts on the host's loopback are reachable from the
// sandbox through the proxy only when the policy allows them; a denial is a 403 for
// HTTP and a reset for other TCP, unknown names fail to resolve, and every decision is
// in `policy log --json` with what decided it.
func TestEgressThroughTheProxy(t *testing.T) {
	s := newSim(t, false)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s", r.Host)
	}))
	t.Cleanup(web.Close)
	webAddr := strings.TrimPrefix(web.URL, "http://")
	_, webPort, _ := net.SplitHostPort(webAddr)
	echo := echoServer(t)
	_, echoPort, _ := net.SplitHostPort(echo)
	env := []string{"SBXSIM_RESOLVE=ok.test=" + webAddr + ",no.test=" + webAddr + ",raw.test=" + echo}
	if r := s.at("0.55.0", nil, "policy", "init", "deny-all"); r.code != 0 {
		t.Fatal(r)
	}
	if r := s.at("0.55.0", nil, "policy", "allow", "network", "ok.test"); r.code != 0 {
		t.Fatal(r)
	}
	name := s.name("egress")
	if r := s.at("0.55.0", env, "create", "-q", "--name", name, "shell", t.TempDir()); r.code != 0 {
		t.Fatal(r)
	}
	sh := func(script string) result {
		t.Helper()
		return s.at("0.55.0", nil, "exec", name, "sh", "-c", script)
	}
	curl := "curl -sS -m 10 "
	cases := []struct {
		name, script string
		code         int
		out, errOut  string
	}{
		{"allowed host", curl + "http://ok.test:" + webPort + "/", 0, "hello from ok.test:" + webPort, ""},
		{"denied HTTP: 403", curl + "-i http://no.test:" + webPort + "/", 0, "403 Forbidden", ""},
		{"denied raw TCP: reset", "exec bash -c 'exec 3<>/dev/tcp/raw.test/" + echoPort + "; echo hi >&3; cat <&3'", 1, "", "reset"},
		{"unknown name: DNS failure", curl + "http://nowhere.example/", 6, "", "resolve"},
		{"host loopback is the sandbox's own", curl + "http://127.0.0.1:" + webPort + "/", 7, "", ""},
		{"explicit proxy, denied", curl + "-i -x http://127.0.0.1:3128 http://no.test:" + webPort + "/", 0, "X-Sbx-Policy: deny", ""},
		{"explicit proxy, CONNECT allowed", curl + "-p -x http://127.0.0.1:3128 http://ok.test:" + webPort + "/", 0, "hello from ok.test", ""},
	}
	for _, c := range cases {
		r := sh(c.script)
		if r.code != c.code || !strings.Contains(r.stdout, c.out) || !strings.Contains(strings.ToLower(r.stderr), c.errOut) {
			t.Errorf("%s: %s; want exit %d, stdout with %q, stderr with %q", c.name, r, c.code, c.out, c.errOut)
		}
	}
	// The host's own addresses are not reachable through the proxy either.
	for _, a := range hostAddrs(t) {
		if r := sh(curl + "http://" + net.JoinHostPort(a, webPort) + "/"); strings.Contains(r.stdout, "hello") {
			t.Errorf("host address %s reached: %s", a, r)
		}
	}
	var log struct {
		Entries []logEntry `json:"entries"`
	}
	if err := json.Unmarshal([]byte(s.at("0.55.0", nil, "policy", "log", name, "--json").stdout), &log); err != nil {
		t.Fatal(err)
	}
	want := map[string]logEntry{
		"ok.test":  {Decision: "allow", Reason: "rule r1: allow ok.test", RuleID: "r1"},
		"no.test":  {Decision: "deny", Reason: "preset deny-all", Shape: "http-403"},
		"raw.test": {Decision: "deny", Reason: "preset deny-all", Shape: "reset"},
	}
	for host, w := range want {
		found := false
		for _, e := range log.Entries {
			if e.Host == host && e.Sandbox == name && e.Decision == w.Decision && e.Reason == w.Reason && e.RuleID == w.RuleID && e.Shape == w.Shape {
				found = true
			}
		}
		if !found {
			t.Errorf("policy log has no %s entry like %+v:\n%+v", host, w, log.Entries)
		}
	}
	// Rules apply at once: allowing no.test lets it through, a deny on ok.test wins
	// over its allow.
	s.at("0.55.0", nil, "policy", "allow", "network", "no.test")
	s.at("0.55.0", nil, "policy", "deny", "network", "ok.test")
	if r := sh(curl + "http://no.test:" + webPort + "/"); r.code != 0 || r.stdout != "hello from no.test:"+webPort {
		t.Errorf("after allow no.test: %s", r)
	}
	if r := sh(curl + "http://ok.test:" + webPort + "/"); !strings.Contains(r.stdout, "blocked by sandbox network policy: ok.test:"+webPort+" (rule r3: deny ok.test)") {
		t.Errorf("after deny ok.test: %s", r)
	}
	var insp struct {
		Network struct {
			Preset string `json:"preset"`
			Rules  []struct {
				ID string `json:"id"`
			} `json:"rules"`
		} `json:"network"`
	}
	if err := json.Unmarshal([]byte(s.at("0.55.0", nil, "inspect", name, "--json").stdout), &insp); err != nil {
		t.Fatal(err)
	}
	if insp.Network.Preset != "deny-all" || len(insp.Network.Rules) != 3 {
		t.Errorf("inspect network: %+v", insp.Network)
	}
}

// TestHangAndSlowCreate: SBXSIM_HANG makes a verb hang until killed while others
// answer; SBXSIM_CREATE_DELAY makes create slow, not broken.
func TestHangAndSlowCreate(t *testing.T) {
	s := newSim(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "exec", "x", "true")
	cmd.Env = s.env("SBXSIM_HANG=exec,ls")
	err := cmd.Run()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Errorf("exec under SBXSIM_HANG ended by itself: %v", err)
	}
	if r := s.runWith([]string{"SBXSIM_HANG=exec,ls"}, "", "version"); r.code != 0 {
		t.Errorf("version under SBXSIM_HANG=exec,ls: %s", r)
	}
	name := s.name("slow")
	start := time.Now()
	if r := s.runWith([]string{"SBXSIM_CREATE_DELAY=1s"}, "", "create", "-q", "--name", name, "shell", t.TempDir()); r.code != 0 {
		t.Fatal(r)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("create with SBXSIM_CREATE_DELAY=1s took %v", d)
	}
}

// TestSettingsAndRetiredVariables: settings get|set|unset|list --json, and the
// DOCKER_SANDBOXES_* variables 0.55 no longer reads.
func TestSettingsAndRetiredVariables(t *testing.T) {
	s := newSim(t, false)
	env := []string{"DOCKER_SANDBOXES_SSH_DEFAULT_AGENT=from-env", "DOCKER_SANDBOXES_PROXY=http://env:3128"}
	for _, c := range []struct{ version, key, want string }{
		{"0.53.0", "ssh.defaultAgent", "from-env"},
		{"0.53.0", "proxy.sandbox", "http://env:3128"},
		{"0.55.0", "ssh.defaultAgent", ""},
		{"0.55.0", "proxy.sandbox", ""},
	} {
		if r := s.at(c.version, env, "settings", "get", c.key); r.code != 0 || r.stdout != c.want+"\n" {
			t.Errorf("v%s settings get %s: %s, want %q", c.version, c.key, r, c.want)
		}
	}
	s.at("0.55.0", nil, "settings", "set", "proxy.sandbox", "http://set:1")
	var v struct{ Key, Value, Source string }
	if err := json.Unmarshal([]byte(s.at("0.55.0", env, "settings", "get", "proxy.sandbox", "--json").stdout), &v); err != nil || v.Value != "http://set:1" || v.Source != "override" {
		t.Errorf("get --json after set: %+v %v", v, err)
	}
	s.at("0.55.0", nil, "settings", "unset", "proxy.sandbox")
	if r := s.at("0.55.0", nil, "settings", "get", "proxy.sandbox"); r.stdout != "\n" {
		t.Errorf("after unset: %s", r)
	}
	var list struct {
		Settings []struct{ Key string } `json:"settings"`
	}
	if err := json.Unmarshal([]byte(s.at("0.55.0", nil, "settings", "list", "--json").stdout), &list); err != nil || len(list.Settings) < 5 {
		t.Errorf("settings list --json: %+v %v", list, err)
	}
	if r := s.at("0.55.0", nil, "settings", "set", "ssh.agentForwardingEnabled", "maybe"); r.code != 1 {
		t.Errorf("a bad boolean: %s", r)
	}
}

// TestPortInspectDfAndLogs: the 0.55 read verbs on a running sandbox.
func TestPortInspectDfAndLogs(t *testing.T) {
	s := newSim(t, false)
	s.at("0.55.0", nil, "policy", "init", "allow-all")
	name := s.name("inspect")
	ws := t.TempDir()
	if r := s.at("0.55.0", nil, "create", "-q", "--name", name, "shell", ws); r.code != 0 {
		t.Fatal(r)
	}
	var ports []struct {
		HostPort    int `json:"host_port"`
		SandboxPort int `json:"sandbox_port"`
	}
	if err := json.Unmarshal([]byte(s.at("0.55.0", nil, "port", "publish", name, "8080", "--json").stdout), &ports); err != nil || len(ports) != 1 || ports[0].SandboxPort != 8080 {
		t.Fatalf("port publish: %+v %v", ports, err)
	}
	if r := s.at("0.55.0", nil, "port", "ls", name, "--format", "yaml"); !strings.Contains(r.stdout, "sandbox_port: 8080") {
		t.Errorf("port ls --format yaml: %s", r)
	}
	var insp struct {
		Name   string `json:"name"`
		Status string `json:"status"`
		Mounts []struct {
			Source string `json:"source"`
		} `json:"mounts"`
		Ports   []any `json:"ports"`
		Network struct {
			Preset string `json:"preset"`
		} `json:"network"`
	}
	if err := json.Unmarshal([]byte(s.at("0.55.0", nil, "inspect", name, "--json").stdout), &insp); err != nil {
		t.Fatal(err)
	}
	if insp.Name != name || insp.Status != "running" || len(insp.Mounts) != 1 || insp.Mounts[0].Source != ws || len(insp.Ports) != 1 || insp.Network.Preset != "allow-all" {
		t.Errorf("inspect --json: %+v", insp)
	}
	if r := s.at("0.55.0", nil, "port", "unpublish", name, "8080"); r.stdout != "No published ports\n" {
		t.Errorf("port unpublish: %s", r)
	}
	var df struct {
		Sandboxes []struct {
			Name      string `json:"name"`
			SizeBytes int64  `json:"size_bytes"`
		} `json:"sandboxes"`
	}
	if err := json.Unmarshal([]byte(s.at("0.55.0", nil, "df", "--json").stdout), &df); err != nil || len(df.Sandboxes) != 1 || df.Sandboxes[0].SizeBytes <= 0 {
		t.Errorf("df --json: %+v %v", df, err)
	}
	if r := s.at("0.55.0", nil, "daemon", "logs", "-n", "5"); !strings.Contains(r.stdout, "policy: preset allow-all") {
		t.Errorf("daemon logs: %s", r)
	}
	if r := s.at("0.55.0", nil, "inspect", "nosuch"); r.code != 1 || !strings.Contains(r.stderr, "no sandbox named 'nosuch'") {
		t.Errorf("inspect of a missing sandbox: %s", r)
	}
}

// openPty returns a new pseudo-terminal's master and slave.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// TestPromptsWithATerminal: with a terminal on stdin (and no --no-input) 0.55 asks:
// the preset before the first create, confirmation before rm; a declined prompt exits
// 1 and changes nothing. --no-input never asks, terminal or not.
func TestPromptsWithATerminal(t *testing.T) {
	s := newFreshSim(t, false)
	ws := t.TempDir()
	name := s.name("tty")
	answer := func(input string, args ...string) result {
		t.Helper()
		m, sl := openPty(t)
		cmd := exec.Command(bin, args...)
		cmd.Env = s.env(v055)
		cmd.Stdin = sl
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { _, _ = io.Copy(io.Discard, m) }() // the terminal's echo
		if _, err := m.WriteString(input); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		r := result{stdout: out.String(), stderr: errb.String()}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			r.code = ee.ExitCode()
		}
		return r
	}
	create := []string{"create", "-q", "--name", name, "shell", ws}
	if r := answer("3\n", append([]string{"--no-input"}, create...)...); r.code != 1 || !strings.Contains(r.stderr, "sbx policy init") {
		t.Errorf("--no-input with a terminal: %s", r)
	}
	if r := answer("\n", create...); r.code != 1 || !strings.Contains(r.stderr, "declined") {
		t.Errorf("preset prompt declined: %s", r)
	}
	if r := answer("3\n", create...); r.code != 0 || !strings.Contains(r.stderr, "Locked Down") {
		t.Fatalf("preset prompt answered 3: %s", r)
	}
	var ls struct{ Preset string }
	if err := json.Unmarshal([]byte(s.at("0.55.0", nil, "policy", "ls", "--json").stdout), &ls); err != nil || ls.Preset != "deny-all" {
		t.Errorf("preset after answering 3: %+v %v", ls, err)
	}
	if r := answer("n\n", "rm", name); r.code != 1 || !strings.Contains(r.stderr, "declined") {
		t.Errorf("rm declined: %s", r)
	}
	if r := answer("y\n", "rm", name); r.code != 0 {
		t.Errorf("rm confirmed: %s", r)
	}
	if r := s.at("0.55.0", nil, "ls", "-q"); r.stdout != "" {
		t.Errorf("after a confirmed rm: %s", r)
	}
}
