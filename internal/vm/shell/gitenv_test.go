package shell

import (
	"slices"
	"testing"
)

func TestWithGitConfig(t *testing.T) {
	cases := []struct {
		name string
		env  []string
		want []string
	}{
		{"none before", []string{"A=1"}, []string{"A=1",
			"GIT_CONFIG_KEY_0=core.checkStat", "GIT_CONFIG_VALUE_0=minimal", "GIT_CONFIG_KEY_1=core.trustctime", "GIT_CONFIG_VALUE_1=false", "GIT_CONFIG_COUNT=2"}},
		{"the caller's kept first", []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=me"}, []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=me",
			"GIT_CONFIG_KEY_1=core.checkStat", "GIT_CONFIG_VALUE_1=minimal", "GIT_CONFIG_KEY_2=core.trustctime", "GIT_CONFIG_VALUE_2=false", "GIT_CONFIG_COUNT=3"}},
		{"the last count wins", []string{"GIT_CONFIG_COUNT=5", "GIT_CONFIG_COUNT=0"}, []string{"GIT_CONFIG_COUNT=5", "GIT_CONFIG_COUNT=0",
			"GIT_CONFIG_KEY_0=core.checkStat", "GIT_CONFIG_VALUE_0=minimal", "GIT_CONFIG_KEY_1=core.trustctime", "GIT_CONFIG_VALUE_1=false", "GIT_CONFIG_COUNT=2"}},
		{"a count git rejects is left to git", []string{"GIT_CONFIG_COUNT=x"}, []string{"GIT_CONFIG_COUNT=x"}},
	}
	for _, tc := range cases {
		if got := withGitConfig(slices.Clone(tc.env)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
