package doctor

import (
	"strings"
	"testing"
)

func TestShareCheck(t *testing.T) {
	env := func(kv ...string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1], true
				}
			}
			return "", false
		}
	}
	cases := []struct {
		name     string
		host     Host
		want     Status
		evidence string
		fix      string
	}{
		{"mac, cache on by default", Host{GOOS: "darwin", Env: env()}, Warn, "virtiofs with its cache on", VirtiofsCacheVar + "=0 sbx daemon restart"},
		{"mac, cache switched on", Host{GOOS: "darwin", Env: env(VirtiofsCacheVar, "1")}, Warn, "edit files on the host while the agent works", VirtiofsCacheVar},
		{"mac, cache off", Host{GOOS: "darwin", Env: env(VirtiofsCacheVar, "0")}, Pass, "virtiofs, cache off", ""},
		{"mac, cache off (false)", Host{GOOS: "darwin", Env: env(VirtiofsCacheVar, "false")}, Pass, "cache off", ""},
		{"mac, no environment read", Host{GOOS: "darwin"}, Warn, "cache on", VirtiofsCacheVar},
		{"linux", Host{GOOS: "linux", Env: env()}, Pass, "shared at its host path", ""},
	}
	for _, tc := range cases {
		c := (&Doctor{Host: tc.host}).share()
		if c.Status != tc.want || !strings.Contains(c.Evidence, tc.evidence) || !strings.Contains(c.Fix, tc.fix) || (tc.fix == "") != (c.Fix == "") {
			t.Errorf("%s: %+v; want %s with %q, fix %q", tc.name, c, tc.want, tc.evidence, tc.fix)
		}
	}
}
