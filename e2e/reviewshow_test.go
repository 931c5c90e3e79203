//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReviewShow shows review mode end to end, in a git and a non-git workspace: a pi
// session (pi's SDK, a scripted model, extension/test/review-e2e.mjs) in review mode
// edits files, creates .git/hooks/pre-commit and makes a script executable; on the host
// not one byte changed (checksums of the whole tree, .git included — but for sbx's own
// remote in .git/config); `/sandbox review` and `pi-sbx-backend review` list every
// change, the executable one first; a host edit made meanwhile refuses the land; a land
// of a subset writes exactly those files; pi killed with SIGKILL, the sandbox is kept
// for its unlanded work, GC keeps it, and once it is removed the next review still lists
// what is left, until discard drops it.
func TestReviewShow(t *testing.T) {
	for _, git := range []bool{true, false} {
		name := "non-git"
		if git {
			name = "git"
		}
		t.Run(name, func(t *testing.T) { reviewShow(t, git) })
	}
}

func reviewShow(t *testing.T, git bool) {
	root, node := piEnv(t)
	w := newWorld(t)
	state := t.TempDir()
	if git {
		gitIn(t, w.ws, "init", "-q")
		gitIn(t, w.ws, "add", "-A")
		gitIn(t, w.ws, "commit", "-q", "-m", "fixture")
	}
	marker := "/tmp/pi-sbx-owned" // what the planted hook would write if it ever ran on the host
	os.Remove(marker)
	before := treeSums(t, w.ws)
	env := w.env("PI_SBX_BACKEND="+backendBin, "PATH="+filepath.Dir(node)+":"+os.Getenv("PATH"),
		"DOCKER_SANDBOX_WORKSPACE_MODE=review", "XDG_STATE_HOME="+state, "DOCKER_SANDBOX_GC_HOURS=0",
		"DOCKER_SANDBOX_ENV_ALLOWLIST=SBXSIM_STATE,SBXSIM_DOCKER,XDG_STATE_HOME")
	config, err := json.Marshal(map[string]any{"ws": w.ws, "extension": filepath.Join(root, "extension")})
	require.NoError(t, err)
	pi := command(node, env, filepath.Join(root, "extension/test/review-e2e.mjs"), string(config))
	pi.Dir = filepath.Join(root, "extension")
	var piErr strings.Builder
	pi.Stderr = &piErr
	stdout, err := pi.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, pi.Start())
	t.Cleanup(func() { _ = pi.Process.Kill(); _ = pi.Wait() })

	// pi's session: its tool calls, then /sandbox review; READY once done.
	var piReview strings.Builder
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		in := false
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "REVIEW-BEGIN":
				in = true
			case line == "REVIEW-END":
				in = false
			case strings.HasPrefix(line, "READY "):
				ready <- true
			case in:
				piReview.WriteString(line + "\n")
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		require.True(t, ok, "pi ended early: %s", piErr.String())
	case <-time.After(3 * time.Minute):
		t.Fatalf("pi's session did not finish: %s", piErr.String())
	}
	names := w.sandboxes()
	require.Len(t, names, 1)
	sandbox := names[0]

	// Not one byte of the host changed (sbx adds its remote to .git/config in clone mode).
	hostChanged := func() []string {
		var out []string
		for _, p := range diffSums(before, treeSums(t, w.ws)) {
			if !(git && p == ".git/config") {
				out = append(out, p)
			}
		}
		return out
	}
	assert.Empty(t, hostChanged(), "the sandbox's work reached the host before land")

	cli := func(args ...string) (string, int) {
		cmd := command(backendBin, env, args...)
		cmd.Dir = w.ws
		out, err := cmd.CombinedOutput()
		code := exitCode(err)
		require.NotEqual(t, -1, code, "%v did not run or was killed: %v", args, err)
		return string(out), code
	}
	ok := func(args ...string) string {
		out, code := cli(args...)
		require.Equal(t, 0, code, "%v: %s", args, out)
		return out
	}
	// listed are the paths of a review's list, in its order ("A +x PATH  (+2 -0)").
	listed := func(review string) []string {
		var paths []string
		for _, line := range strings.Split(review, "\n") {
			f := strings.Fields(line)
			if len(f) < 3 || len(f[0]) != 1 || !strings.Contains("AMDRT", f[0]) {
				continue
			}
			for i := 1; i < len(f); i++ {
				if strings.HasPrefix(f[i], "(") {
					paths = append(paths, f[i-1])
					break
				}
			}
		}
		return paths
	}
	want := []string{"build.sh", "README.md", "deep/a/b/c/file.md", "notes/todo.txt", "src/new.go"}
	for _, review := range []string{piReview.String(), ok("review", "--stat")} {
		assert.Equal(t, want, listed(review), "every change, the executable one first:\n%s", review)
		assert.Regexp(t, `(?s)Runs on the host.*A \+x build\.sh.*! gains \+x.*Other changes \(4\)`, review)
		// The planted hook is never part of the work (not in the list above), but it is
		// shown, flagged, in a section of its own.
		assert.Regexp(t, `In the sandbox's own \.git: would run on the host, never landed \(1\)\n  ! \.git/hooks/pre-commit: `, review)
	}
	full := ok("review", "README.md")
	assert.Contains(t, full, "-hello world\n+hello sandbox\n")

	// A host edit made meanwhile refuses the land, and nothing is written.
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "notes/todo.txt"), []byte("edited on the host\n"), 0o644))
	edited := treeSums(t, w.ws)
	out, code := cli("land", "README.md", "notes/todo.txt")
	assert.Equal(t, 1, code, out)
	assert.Equal(t, "pi-sbx-backend land: nothing landed: notes/todo.txt: changed on the host since the sandbox started\n", out)
	assert.Empty(t, diffSums(edited, treeSums(t, w.ws)), "a refused land writes nothing")

	// A land of a subset writes exactly those files.
	out, code = cli("land", "README.md", "src/new.go")
	require.Equal(t, 0, code, out)
	assert.Equal(t, "wrote README.md (33 bytes)\nwrote src/new.go (58 bytes)\nlanded 2 change(s) from "+sandbox+"; 3 left\n", out)
	assert.ElementsMatch(t, []string{"README.md", "src/new.go"}, diffSums(edited, treeSums(t, w.ws)))
	b, err := os.ReadFile(filepath.Join(w.ws, "README.md"))
	require.NoError(t, err)
	assert.Equal(t, "# demo\nhello sandbox\nsecond line\n", string(b))

	// pi killed with SIGKILL: serve's stdin ends, teardown keeps the sandbox (unlanded
	// work), and so does GC.
	require.NoError(t, pi.Process.Signal(syscall.SIGKILL))
	_ = pi.Wait()
	require.Eventually(t, func() bool { return len(servePids()) == 0 }, 30*time.Second, 50*time.Millisecond, "serve ends after pi")
	assert.Equal(t, []string{sandbox}, w.sandboxes(), "the sandbox with unlanded work is kept")
	out, code = cli("gc", "--hours", "0")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "3 unlanded change(s)")
	assert.Equal(t, []string{sandbox}, w.sandboxes(), "GC keeps it")

	// Gone from outside, its work is still listed, without what landed.
	w.sim("rm", "--force", sandbox)
	require.Empty(t, w.sandboxes())
	left := ok("review", "--stat")
	assert.Equal(t, []string{"build.sh", "deep/a/b/c/file.md", "notes/todo.txt"}, listed(left), left)
	assert.NoFileExists(t, filepath.Join(w.ws, ".git/hooks/pre-commit"))
	assert.NoFileExists(t, marker, "nothing of the sandbox ran on the host")

	// discard drops the kept work; the host is not touched.
	landed := treeSums(t, w.ws)
	assert.Equal(t, "discarded 3 change(s) of "+sandbox+"\n", ok("discard"))
	assert.Empty(t, diffSums(landed, treeSums(t, w.ws)))
	out, code = cli("review")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "no review sandbox and no kept work for this workspace")
}
