//go:build linux

package sbxsim

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestDecide: presets, patterns and precedence, table-driven on the engine itself.
func TestDecide(t *testing.T) {
	rules := []Rule{
		{ID: "r1", Action: "allow", Resource: "*.example.com"},
		{ID: "r2", Action: "allow", Resource: "api.test:8080"},
		{ID: "r3", Action: "deny", Resource: "bad.example.com"},
		{ID: "r4", Action: "allow", Resource: "10.0.0.0/8"},
		{ID: "r5", Action: "allow", Resource: "mine.test", Sandbox: "sb1"},
		{ID: "r6", Action: "deny", Resource: "**:25"},
	}
	cases := []struct {
		preset  string
		org     OrgPolicy
		sandbox string
		host    string
		port    int
		open    bool
		allow   bool
		reason  string
	}{
		{presetDenyAll, OrgPolicy{}, "", "example.com", 443, false, false, "preset deny-all"},
		{presetDenyAll, OrgPolicy{}, "", "a.example.com", 443, false, true, "rule r1: allow *.example.com"},
		{presetDenyAll, OrgPolicy{}, "", "bad.example.com", 443, false, false, "rule r3: deny bad.example.com"},
		{presetDenyAll, OrgPolicy{}, "", "a.example.com", 25, false, false, "rule r6: deny **:25"},
		{presetDenyAll, OrgPolicy{}, "", "api.test", 8080, false, true, "rule r2: allow api.test:8080"},
		{presetDenyAll, OrgPolicy{}, "", "api.test", 80, false, false, "preset deny-all"},
		{presetDenyAll, OrgPolicy{}, "", "10.9.8.7", 22, false, true, "rule r4: allow 10.0.0.0/8"},
		{presetDenyAll, OrgPolicy{}, "", "11.0.0.1", 22, false, false, "preset deny-all"},
		{presetDenyAll, OrgPolicy{}, "sb1", "mine.test", 443, false, true, "rule r5: allow mine.test"},
		{presetDenyAll, OrgPolicy{}, "sb2", "mine.test", 443, false, false, "preset deny-all"},
		{presetAllowAll, OrgPolicy{}, "", "any.test", 443, false, true, "preset allow-all"},
		{presetBalanced, OrgPolicy{}, "", "github.com", 443, false, true, "preset balanced"},
		{presetBalanced, OrgPolicy{}, "", "evil.test", 443, false, false, "preset balanced"},
		{"", OrgPolicy{}, "", "any.test", 443, false, false, "no preset"},
		{"", OrgPolicy{}, "", "any.test", 443, true, true, "no preset"},
		{presetAllowAll, OrgPolicy{Active: true}, "", "a.example.com", 443, false, false, "org governance"},
		{presetAllowAll, OrgPolicy{Active: true, Allow: []string{"org.test"}}, "", "org.test", 443, false, true, "rule org-1: allow org.test"},
		{presetAllowAll, OrgPolicy{Active: true, Allow: []string{"bad.example.com"}}, "", "bad.example.com", 443, false, false, "rule r3: deny bad.example.com"},
	}
	for _, c := range cases {
		d := decide(Policy{Preset: c.preset, Rules: rules}, c.org, c.sandbox, c.host, c.port, c.open)
		if d.Allow != c.allow || d.Reason != c.reason {
			t.Errorf("%s %+v %s→%s:%d: %v (%s), want %v (%s)", c.preset, c.org, c.sandbox, c.host, c.port, d.Allow, d.Reason, c.allow, c.reason)
		}
	}
}

// TestParsePattern: what a rule may be, and what is refused.
func TestParsePattern(t *testing.T) {
	for in, ok := range map[string]bool{
		"example.com": true, "*.example.com": true, "**": true, "10.0.0.0/8": true, "1.2.3.4:443": true,
		"api.test:8080": true, "": false, "a..b": false, "*.": false, "x:0": false, "x:70000": false,
		"10.0.0.0/99": false, "-x.com": false, "a b": false,
	} {
		if _, err := parsePattern(in); (err == nil) != ok {
			t.Errorf("parsePattern(%q): %v, want ok=%v", in, err, ok)
		}
	}
}

// TestPolicyLogIsBounded: past its bound the log keeps its newest entries, whole.
func TestPolicyLogIsBounded(t *testing.T) {
	st := Store{Root: t.TempDir()}
	for i := 0; i < 30; i++ {
		if err := st.appendLog(LogEntry{Time: time.Unix(int64(i), 0).UTC(), Sandbox: "s", Host: fmt.Sprintf("h%d.test", i), Port: 443, Decision: "deny", Reason: strings.Repeat("x", 200)}); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(st.policyLog(), os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := trimLog(f, 2000); err != nil {
		t.Fatal(err)
	}
	f.Close()
	entries, err := st.readLog("")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 || len(entries) >= 30 || entries[len(entries)-1].Host != "h29.test" {
		t.Fatalf("after trimming: %d entries, last %+v", len(entries), entries[len(entries)-1])
	}
	fi, _ := os.Stat(st.policyLog())
	if fi.Size() > 1000 {
		t.Errorf("trimmed log is %d bytes, want at most half of 2000", fi.Size())
	}
}
