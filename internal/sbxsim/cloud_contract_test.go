//go:build linux

package sbxsim

import (
	"slices"
	"sort"
	"testing"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// TestSimAcceptsTheCloudContract: under --cloud, at each version, sbxsim takes the
// global --cloud where the contract has it, parses exactly each verb's cloud flags
// (sbx.Verb.CloudFlagsAt) plus the ones it parses only to refuse (which the contract
// marks Local), and has the cloud-only verbs (sbx.CloudVerbs) from the same version.
func TestSimAcceptsTheCloudContract(t *testing.T) {
	for _, version := range []string{sbx.MinVersion, "0.44.0", sbx.CloudSince, sbx.PullSince, "0.53.0", V055} {
		c := &cli{env: Env{LookupEnv: func(k string) (string, bool) {
			if k == "SBXSIM_VERSION" {
				return version, true
			}
			return "", false
		}}}
		_, err := c.globalFlags([]string{"--cloud", "version"})
		if got, want := err == nil, sbx.SupportsGlobal(version, "cloud"); got != want {
			t.Errorf("v%s: sbxsim accepts --cloud: %v, the contract: %v", version, got, want)
		}
		if err != nil {
			continue
		}
		cmds := cloudCommands(commands())
		for _, v := range append(slices.Clone(sbx.Verbs), sbx.CloudVerbs...) {
			if !v.At(version) {
				continue
			}
			var want, got []string
			for _, f := range v.CloudFlagsAt(version) {
				want = append(want, describe(f.Long, f.Short, f.Value))
			}
			for _, f := range c.cloudFlagsOf(v.Name) {
				if slices.Contains(cloudRefused[v.Name], f.long) {
					continue
				}
				got = append(got, describe(f.long, f.short, f.value))
			}
			sort.Strings(want)
			sort.Strings(got)
			if !slices.Equal(want, got) {
				t.Errorf("v%s --cloud %s: sbxsim accepts %v, the contract documents %v", version, v.Name, got, want)
			}
			for _, refused := range cloudRefused[v.Name] {
				i := slices.IndexFunc(v.Flags, func(f sbx.Flag) bool { return f.Long == refused })
				if i < 0 || !v.Flags[i].Local {
					t.Errorf("--cloud %s --%s: sbxsim refuses it, the contract does not mark it Local", v.Name, refused)
				}
			}
			if v.Cloud && !slices.ContainsFunc(cmds, func(cmd command) bool { return cmd.name == v.Name && cmd.since == v.Since }) {
				t.Errorf("the contract's cloud verb %s (since %s) is not simulated", v.Name, v.Since)
			}
		}
	}
	for _, cmd := range cloudCommands(nil) {
		if _, ok := sbx.VerbNamed(cmd.name); ok {
			continue
		}
		if !slices.ContainsFunc(sbx.CloudVerbs, func(v sbx.Verb) bool { return v.Name == cmd.name }) {
			t.Errorf("sbxsim's --cloud %s is not in the contract table", cmd.name)
		}
	}
}
