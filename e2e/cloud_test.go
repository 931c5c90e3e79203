//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cloudRTT is the round trip sbxsim --cloud adds to every exec stream and cp in these
// tests, so that they run at a WAN's pace.
const cloudRTT = "40ms"

// cloudEnv is a cloud session's environment: PI_SBX_CLOUD, the test's state directory,
// and the simulator's cloud settings kept for sbx (the product scrubs sbx's
// environment: only the allowlist passes).
func cloudEnv(state string, extra ...string) []string {
	allow, _ := suiteSim()
	allow = append(allow, "SBXSIM_CLOUD_RTT", "SBXSIM_CLOUD_TTL_SCALE")
	return append([]string{
		"PI_SBX_CLOUD=1", "XDG_STATE_HOME=" + state, "DOCKER_SANDBOX_GC_HOURS=0",
		"SBXSIM_CLOUD_RTT=" + cloudRTT,
		"DOCKER_SANDBOX_ENV_ALLOWLIST=" + strings.Join(allow, ","),
	}, extra...)
}

// cloudSandboxes lists the test's cloud sandboxes (testsim removes them at its end).
func (w *world) cloudSandboxes() []string {
	w.t.Helper()
	out, code := w.sim("--cloud", "ls", "-q")
	if code != 0 {
		return nil
	}
	return strings.Fields(out)
}

// TestCloudServeEditsAndLands: serve with PI_SBX_CLOUD=1 (sbxsim --cloud, a 40 ms round
// trip) works in a cloud sandbox on a copy of the workspace at the same path — a git
// one with the host's uncommitted changes, or a plain one — edits there and runs a
// command; the host tree is byte for byte unchanged until `land`, which brings exactly
// the sandbox's changes.
func TestCloudServeEditsAndLands(t *testing.T) {
	for _, git := range []bool{true, false} {
		t.Run(map[bool]string{true: "git", false: "plain"}[git], func(t *testing.T) {
			w, state := reviewWorld(t, git)
			before := treeSums(t, w.ws)
			cs, cmd, stderr := w.serve(nil, nil, cloudEnv(state)...)

			st := call(t, cs, "pi_sbx_status", `{}`)
			require.False(t, st.IsError, "%s\n%s", text(st), stderr.String())
			assert.Contains(t, text(st), "(review)")
			assert.Contains(t, text(st), "cloud: stops at")
			names := w.cloudSandboxes()
			require.Len(t, names, 1, "one cloud sandbox")
			assert.Empty(t, w.sandboxes(), "no local one")
			assert.NotContains(t, names[0], ".")

			res := call(t, cs, "bash", `{"command":"pwd; cat edit-me.txt; test -e build/out.txt || echo build-not-shipped"}`)
			require.False(t, res.IsError, text(res))
			if git {
				assert.Equal(t, w.ws+"\nalpha\nhost edit\nbuild-not-shipped\n", text(res), "same path, the host's uncommitted change, ignored files left out")
				res = call(t, cs, "bash", `{"command":"git status --short; git branch --show-current"}`)
				assert.Equal(t, " M edit-me.txt\n D notes/todo.txt\n?? untracked.txt\nmain\n", text(res))
			} else {
				assert.Equal(t, w.ws+"\nalpha\nbeta\ngamma\nbuild-not-shipped\n", text(res))
			}

			// The agent's work: an edit, a new file, a deletion, and a command run.
			res = call(t, cs, "edit", `{"path":"README.md","edits":[{"oldText":"second line","newText":"second line, from the cloud"}]}`)
			require.False(t, res.IsError, text(res))
			res = call(t, cs, "write", `{"path":"src/cloud.go","content":"package main\n"}`)
			require.False(t, res.IsError, text(res))
			res = call(t, cs, "bash", `{"command":"rm deep/a/b/c/file.md && grep -c cloud README.md && ls src"}`)
			require.False(t, res.IsError, text(res))
			assert.Equal(t, "1\ncloud.go\nmain.go\nutil\n", text(res))
			assert.Empty(t, diffSums(before, treeSums(t, w.ws)), "the host is untouched until land")

			land := command(backendBin, w.env(cloudEnv(state)...), "land", "--all")
			land.Dir = w.ws
			out, err := land.CombinedOutput()
			require.NoError(t, err, "%s", out)
			changed := diffSums(before, treeSums(t, w.ws))
			sort.Strings(changed)
			// The deletion empties deep/a/b/c and its parents, which land removes too, as git does.
			assert.Equal(t, []string{"README.md", "deep (removed)", "deep/a (removed)", "deep/a/b (removed)", "deep/a/b/c (removed)",
				"deep/a/b/c/file.md (removed)", "src/cloud.go"}, changed, "land brings exactly the sandbox's changes")
			body, err := os.ReadFile(filepath.Join(w.ws, "README.md"))
			require.NoError(t, err)
			assert.Equal(t, "# demo\nhello world\nsecond line, from the cloud\n", string(body))

			require.NoError(t, cs.Close())
			require.NoError(t, ignoreExit(cmd.Wait()))
		})
	}
}

// TestCloudQuotaIsOneLine: past the account's quota of cloud sandboxes, the session's
// start fails with one line that says what to do.
func TestCloudQuotaIsOneLine(t *testing.T) {
	w, state := reviewWorld(t, false)
	env := cloudEnv(state)
	for i := 0; i < 10; i++ {
		r := w.sims.Run("--cloud", "create", "--name", "other-"+string(rune('a'+i)), "shell")
		require.Zero(t, r.Code, r.String())
	}
	cs, _, stderr := w.serve(nil, nil, env...)
	st := call(t, cs, "pi_sbx_status", `{}`)
	require.True(t, st.IsError, "%s\n%s", text(st), stderr.String())
	assert.Contains(t, text(st), "quota is used up (10 at once)")
	assert.NotContains(t, strings.TrimSpace(text(st)), "\n", "one line")
}

// cloudStatus is a cloud sandbox's status as `sbx --cloud ls --json` says it.
func (w *world) cloudStatus(t *testing.T, name string) string {
	out := w.sims.Must("--cloud", "ls", "--json")
	var ls struct {
		Sandboxes []struct{ Name, Status string } `json:"sandboxes"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &ls), out)
	for _, sb := range ls.Sandboxes {
		if sb.Name == name {
			return sb.Status
		}
	}
	return ""
}

// TestCloudTimeoutStopsAndWorkLands: a cloud sandbox is created to stop, never be
// deleted, when its time to live ends (sbxsim's TTL clock 60 times faster, and set to a
// minute once the work is done: a second); the work done before is still there:
// review shows it, land brings what is asked for to the host, the session's end keeps
// the sandbox for the rest, and discard removes it.
func TestCloudTimeoutStopsAndWorkLands(t *testing.T) {
	w, state := reviewWorld(t, false)
	before := treeSums(t, w.ws)
	cs, cmd, stderr := w.serve(nil, nil, cloudEnv(state, "SBXSIM_CLOUD_TTL_SCALE=60")...)
	res := call(t, cs, "write", `{"path":"kept.txt","content":"written before the timeout\n"}`)
	require.False(t, res.IsError, "%s\n%s", text(res), stderr.String())
	res = call(t, cs, "write", `{"path":"dropped.txt","content":"never landed\n"}`)
	require.False(t, res.IsError, text(res))
	names := w.cloudSandboxes()
	require.Len(t, names, 1)
	w.sims.Must("--cloud", "ttl", names[0], "1m")
	seen := map[string]int{}
	require.Eventually(t, func() bool { st := w.cloudStatus(t, names[0]); seen[st]++; return st == "stopped" }, time.Minute, 100*time.Millisecond,
		"the time to live ends: the sandbox stops; seen %v\n%s", seen, stderr)
	assert.Empty(t, diffSums(before, treeSums(t, w.ws)), "nothing landed by itself")

	run := func(args ...string) string {
		c := command(backendBin, w.env(cloudEnv(state)...), args...)
		c.Dir = w.ws
		out, err := c.CombinedOutput()
		require.NoError(t, err, "%v: %s", args, out)
		return string(out)
	}
	assert.Contains(t, run("review", "--stat"), "kept.txt", "review starts the stopped sandbox and shows its work")
	run("land", "kept.txt")
	assert.Equal(t, []string{"kept.txt"}, diffSums(before, treeSums(t, w.ws)))
	body, err := os.ReadFile(filepath.Join(w.ws, "kept.txt"))
	require.NoError(t, err)
	assert.Equal(t, "written before the timeout\n", string(body))
	require.NoError(t, cs.Close())
	require.NoError(t, ignoreExit(cmd.Wait()))
	assert.Contains(t, stderr.String(), "keeping sandbox "+names[0], "dropped.txt is not landed")
	assert.Equal(t, names, w.cloudSandboxes())
	run("discard")
	assert.Empty(t, w.cloudSandboxes(), "discard removes the cloud sandbox")
	assert.Equal(t, []string{"kept.txt"}, diffSums(before, treeSums(t, w.ws)), "and touches nothing of the host's")
}

// cloudExpiry is when a cloud sandbox stops unless extended, as `sbx --cloud ls --json`
// says it.
func (w *world) cloudExpiry(t *testing.T, name string) time.Time {
	out := w.sims.Must("--cloud", "ls", "--json")
	var ls struct {
		Sandboxes []struct {
			Name      string
			ExpiresAt time.Time `json:"expires_at"`
		} `json:"sandboxes"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &ls), out)
	for _, sb := range ls.Sandboxes {
		if sb.Name == name {
			require.False(t, sb.ExpiresAt.IsZero(), out)
			return sb.ExpiresAt
		}
	}
	t.Fatalf("no cloud sandbox %s:\n%s", name, out)
	return time.Time{}
}

// TestCloudTTLFollowsTheSession: while the session is open, serve extends its cloud
// sandbox's time to live (every PI_SBX_CLOUD_EXTEND, here 1 s, by a minute: sbx's
// smallest step); once the session has ended — the sandbox kept for work not landed —
// nothing extends it, so it stops within its time to live.
func TestCloudTTLFollowsTheSession(t *testing.T) {
	w, state := reviewWorld(t, false)
	cs, cmd, stderr := w.serve(nil, nil, cloudEnv(state, "PI_SBX_CLOUD_EXTEND=1s")...)
	res := call(t, cs, "write", `{"path":"unlanded.txt","content":"keeps the sandbox\n"}`)
	require.False(t, res.IsError, "%s\n%s", text(res), stderr.String())
	names := w.cloudSandboxes()
	require.Len(t, names, 1)
	created := w.cloudExpiry(t, names[0])
	require.Eventually(t, func() bool { return w.cloudExpiry(t, names[0]).Sub(created) >= 2*time.Minute }, time.Minute, 200*time.Millisecond,
		"the session extends the time to live (created to stop at %s)\n%s", created, stderr)

	require.NoError(t, cs.Close())
	require.NoError(t, ignoreExit(cmd.Wait()))
	require.Contains(t, stderr.String(), "keeping sandbox "+names[0], "unlanded.txt keeps it")
	ended := w.cloudExpiry(t, names[0])
	time.Sleep(3 * time.Second) // three of the session's intervals
	assert.Equal(t, ended, w.cloudExpiry(t, names[0]), "extended after the session ended")
}

// TestCloudPiSessionEditsAndRunsTests: pi itself (print mode, its scripted model) with
// PI_SBX_CLOUD=1 edits a file and runs the project's test in the cloud sandbox; the test
// sees the edit there (the model reads what it printed), the host tree is unchanged when
// pi has ended, and `land --all` brings exactly the work.
func TestCloudPiSessionEditsAndRunsTests(t *testing.T) {
	root, node := piEnv(t)
	ext := filepath.Join(root, "extension")
	w, state := reviewWorld(t, true)
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "test.sh"), []byte("grep -q 'hello from the cloud' README.md && echo TESTS-PASS || echo TESTS-FAIL\n"), 0o644))
	before := treeSums(t, w.ws)
	steps := `[[["edit",{"path":"README.md","edits":[{"oldText":"hello world","newText":"hello from the cloud"}]}]],` +
		`[["bash",{"command":"(sh test.sh; hostname) > test-result.txt"}]],` +
		`[["read",{"path":"test-result.txt"}]]]`
	cmd := command(filepath.Join(ext, "node_modules/.bin/pi"),
		w.env(cloudEnv(state, "HOME="+t.TempDir(), "PI_SBX_BACKEND="+backendBin, "PATH="+filepath.Dir(node)+":"+os.Getenv("PATH"),
			"PI_FAUX_STEPS="+steps)...),
		"-p", "--provider", "faux", "--model", "scripted", "-e", ext, "-e", filepath.Join(ext, "test/faux-provider.ts"), "go")
	cmd.Dir = w.ws
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "%s", stderr.String())
	names := w.cloudSandboxes()
	require.Len(t, names, 1, "one cloud sandbox, kept for the work not landed\n%s", stderr.String())
	assert.Empty(t, w.sandboxes(), "no local sandbox")
	// The model read what the test printed, in the cloud sandbox (its hostname).
	assert.Contains(t, stdout.String(), "read: TESTS-PASS/"+names[0]+"/", "what the model saw")
	assert.Empty(t, diffSums(before, treeSums(t, w.ws)), "nothing reached the host")

	land := command(backendBin, w.env(cloudEnv(state)...), "land", "--all")
	land.Dir = w.ws
	lout, err := land.CombinedOutput()
	require.NoError(t, err, "%s", lout)
	assert.ElementsMatch(t, []string{"README.md", "test-result.txt"}, diffSums(before, treeSums(t, w.ws)), "land brings exactly the work")
	body, err := os.ReadFile(filepath.Join(w.ws, "README.md"))
	require.NoError(t, err)
	assert.Contains(t, string(body), "hello from the cloud")
}

// TestCloudGCKeepsUnlandedWork: GC treats a cloud sandbox kept for its work as a local
// review sandbox: a sweep keeps it while the work is not landed, and `gc --force`
// fetches the work first, then removes it; review still shows the work.
func TestCloudGCKeepsUnlandedWork(t *testing.T) {
	w, state := reviewWorld(t, false)
	cs, cmd, stderr := w.serve(nil, nil, cloudEnv(state)...)
	res := call(t, cs, "write", `{"path":"unlanded.txt","content":"work of the cloud\n"}`)
	require.False(t, res.IsError, "%s\n%s", text(res), stderr.String())
	names := w.cloudSandboxes()
	require.Len(t, names, 1)
	require.NoError(t, cs.Close())
	require.NoError(t, ignoreExit(cmd.Wait()))
	require.Contains(t, stderr.String(), "keeping sandbox "+names[0])

	allow, _ := suiteSim()
	sweep := func(args ...string) string {
		gc := command(backendBin, w.env("XDG_STATE_HOME="+state, "SBXSIM_CLOUD_RTT="+cloudRTT,
			"DOCKER_SANDBOX_ENV_ALLOWLIST="+strings.Join(append(allow, "SBXSIM_CLOUD_RTT"), ",")),
			append([]string{"gc", "--hours", "0"}, args...)...)
		gc.Dir = w.ws
		out, err := gc.CombinedOutput()
		require.NoError(t, err, "gc %v: %s", args, out)
		return string(out)
	}
	out := sweep()
	assert.Equal(t, names, w.cloudSandboxes(), "a sweep keeps the cloud sandbox of unlanded work:\n%s", out)
	out = sweep("--force")
	assert.Empty(t, w.cloudSandboxes(), "gc --force removes it:\n%s", out)

	review := command(backendBin, w.env(cloudEnv(state)...), "review", "--stat")
	review.Dir = w.ws
	rout, err := review.CombinedOutput()
	require.NoError(t, err, "%s", rout)
	assert.Contains(t, string(rout), "unlanded.txt", "the work was fetched before the removal")
}
