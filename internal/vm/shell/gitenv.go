package shell

import (
	"strconv"
	"strings"
)

// gitShareConfig is the git configuration every command gets through git's environment
// (GIT_CONFIG_COUNT, GIT_CONFIG_KEY_n, GIT_CONFIG_VALUE_n). A workspace shared with the
// host is one repository seen from two machines: its files' owner, inode and ctime
// differ between the host's view and the VM's (agent, uid 1000, an idmapped or virtiofs
// mount). With git's defaults, a `git status` on one side after one on the other finds
// every index entry changed, re-reads and re-hashes the whole tree and rewrites the
// index — each time, on both sides. With these, git in the VM compares only what both
// views share (the whole-second mtime and the size), so it neither re-hashes nor
// rewrites a host-written index; a file changed within the index's second is still
// caught by git's racy-entry check.
func gitShareConfig() [][2]string {
	return [][2]string{{"core.checkStat", "minimal"}, {"core.trustctime", "false"}}
}

// withGitConfig adds gitShareConfig to env after any GIT_CONFIG_COUNT entries already
// there (the last value of a key is the one a process gets). An env whose count git
// itself would reject is left as it is, for git to report.
func withGitConfig(env []string) []string {
	n := 0
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GIT_CONFIG_COUNT="); ok {
			c, err := strconv.Atoi(v)
			if v != "" && (err != nil || c < 0) {
				return env
			}
			n = c
		}
	}
	for i, kv := range gitShareConfig() {
		k := strconv.Itoa(n + i)
		env = append(env, "GIT_CONFIG_KEY_"+k+"="+kv[0], "GIT_CONFIG_VALUE_"+k+"="+kv[1])
	}
	return append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(n+len(gitShareConfig())))
}
