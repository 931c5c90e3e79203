//go:build linux

package sbxsim

import (
	"sort"
	"testing"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// TestSimAcceptsExactlyTheContract: for every verb of the contract table in package
// sbx, at each version where a flag appears, sbxsim's flags are the table's — no more
// (an undocumented flag is rejected as sbx rejects it), no fewer — and sbxsim has no
// verb the table does not document; each verb and global flag appears in the same
// version on both sides.
func TestSimAcceptsExactlyTheContract(t *testing.T) {
	for _, version := range []string{sbx.MinVersion, "0.45.0", sbx.PullSince, "0.53.0", V055} {
		c := &cli{env: Env{LookupEnv: func(k string) (string, bool) {
			if k == "SBXSIM_VERSION" {
				return version, true
			}
			return "", false
		}}}
		for _, g := range []string{"no-input", "debug"} {
			_, err := c.globalFlags([]string{"--" + g, "version"})
			if got, want := err == nil, sbx.SupportsGlobal(version, g); got != want {
				t.Errorf("v%s: sbxsim accepts --%s: %v, the contract: %v", version, g, got, want)
			}
		}
		for _, v := range sbx.Verbs {
			if !v.At(version) {
				continue
			}
			var want, got []string
			for _, f := range v.FlagsAt(version) {
				want = append(want, describe(f.Long, f.Short, f.Value))
			}
			for _, f := range c.flagsOf(v.Name) {
				got = append(got, describe(f.long, f.short, f.value))
			}
			sort.Strings(want)
			sort.Strings(got)
			if len(want) != len(got) || len(want) > 0 && !equal(want, got) {
				t.Errorf("v%s %s: sbxsim accepts %v, the contract documents %v", version, v.Name, got, want)
			}
		}
	}
	for _, cmd := range commands() {
		v, ok := sbx.VerbNamed(cmd.name)
		if !ok {
			t.Errorf("sbxsim's %s is not in the contract table", cmd.name)
		} else if v.Since != cmd.since {
			t.Errorf("%s: sbxsim has it since %q, the contract since %q", cmd.name, cmd.since, v.Since)
		}
	}
	for _, v := range sbx.Verbs {
		found := false
		for _, cmd := range commands() {
			found = found || cmd.name == v.Name
		}
		if !found {
			t.Errorf("the contract's %s is not simulated", v.Name)
		}
	}
}

func describe(long, short string, value bool) string {
	s := "--" + long
	if short != "" {
		s += "/-" + short
	}
	if value {
		s += "=V"
	}
	return s
}

func equal(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
