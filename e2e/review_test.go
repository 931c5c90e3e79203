//go:build e2e

package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/review"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/keep"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/settings"
)

// treeSums is every entry under dir (.git included): path -> mode and content hash (a
// link's target), so that a test can say exactly what changed.
func treeSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		v := fi.Mode().String()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			v += " -> " + l
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			h := sha256.Sum256(b)
			v += " " + hex.EncodeToString(h[:])
		}
		sums[rel] = v
		return nil
	}))
	return sums
}

// diffSums lists the paths added, removed or changed between two treeSums.
func diffSums(before, after map[string]string) []string {
	var out []string
	for p, v := range after {
		if before[p] != v {
			out = append(out, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, p+" (removed)")
		}
	}
	return out
}

// gitIn runs the test's own git in dir.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@e", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1"}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// reviewWorld is a world whose workspace is a git repository with uncommitted changes
// (git) or stays a plain directory, and whose state directory (review records and
// stores) is the test's own.
func reviewWorld(t *testing.T, git bool) (*world, string) {
	w := newWorld(t)
	state := t.TempDir()
	if git {
		gitIn(t, w.ws, "init", "-q")
		gitIn(t, w.ws, "add", "-A")
		gitIn(t, w.ws, "commit", "-q", "-m", "fixture")
		// Uncommitted at start: a change, a deletion, an untracked file.
		require.NoError(t, os.WriteFile(filepath.Join(w.ws, "edit-me.txt"), []byte("alpha\nhost edit\n"), 0o644))
		require.NoError(t, os.Remove(filepath.Join(w.ws, "notes/todo.txt")))
		require.NoError(t, os.WriteFile(filepath.Join(w.ws, "untracked.txt"), []byte("not committed\n"), 0o644))
	}
	return w, state
}

// sweep runs `pi-sbx-backend gc --hours 0` with args in the workspace, on the test's
// state directory, and returns its output; the sweep must succeed.
func (w *world) sweep(t *testing.T, state string, args ...string) string {
	t.Helper()
	gc := command(backendBin, w.env("XDG_STATE_HOME="+state), append([]string{"gc", "--hours", "0"}, args...)...)
	gc.Dir = w.ws
	out, err := gc.CombinedOutput()
	require.NoError(t, err, "gc %v: %s", args, out)
	return string(out)
}

func (w *world) keeper(t *testing.T, state string) *keep.Keeper {
	st, err := settings.Parse(w.env("XDG_STATE_HOME=" + state))
	require.NoError(t, err)
	k, err := keep.New(st.StateHome, st.Environ, st.Client(sbx.ExecRunner{}))
	require.NoError(t, err)
	return k
}

// sandboxWork is the script the agent runs: a file edited, one created, a git hook
// planted, a script made executable, and (in git mode) a commit of its own.
const sandboxWork = `set -e
printf 'edited in the sandbox\n' >> README.md
printf 'package main\n' > src/new.go
mkdir -p .git/hooks && printf '#!/bin/sh\necho owned\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit
printf '#!/bin/sh\necho run\n' > run.sh && chmod +x run.sh
rm deep/a/b/c/file.md
if [ -n "$COMMIT" ]; then git add src/new.go && git -c user.name=a -c user.email=a@b commit -q -m 'agent commit'; fi
echo done`

// TestReviewClone: DOCKER_SANDBOX_WORKSPACE_MODE=review on a git workspace is an sbx
// --clone sandbox at the same path whose start state has the host's uncommitted changes
// (and its ignored files); the sandbox's work — edits, a planted .git/hooks/pre-commit,
// a chmod +x — leaves the host byte for byte as it was (the whole tree, .git included,
// but for sbx's own remote in .git/config) until collected, and Collect returns it as
// Base and Head; teardown keeps a sandbox with unlanded work (stopped), GC keeps it
// until forced, and the kept refs outlive it.
func TestReviewClone(t *testing.T) {
	w, state := reviewWorld(t, true)
	before := treeSums(t, w.ws)
	cs, cmd, stderr := w.serve(nil, nil, "DOCKER_SANDBOX_WORKSPACE_MODE=review", "XDG_STATE_HOME="+state, "DOCKER_SANDBOX_GC_HOURS=0")

	st := call(t, cs, "pi_sbx_status", `{}`)
	require.False(t, st.IsError, "%s\n%s", text(st), stderr.String())
	assert.Contains(t, text(st), "(review)")
	names := w.sandboxes()
	require.Len(t, names, 1)
	name := names[0]

	res := call(t, cs, "bash", `{"command":"pwd; git remote get-url origin; git status --short; cat edit-me.txt; test -e notes/todo.txt || echo todo-gone; cat untracked.txt build/out.txt; git branch --show-current"}`)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, w.ws+"\n/run/sandbox/source\n M edit-me.txt\n D notes/todo.txt\n?? untracked.txt\nalpha\nhost edit\ntodo-gone\nnot committed\nhello from build\nmain\n", text(res),
		"same path, origin the read-only source, the host's uncommitted changes and ignored files there, the host's branch and no other")
	res = call(t, cs, "bash", `{"command":"touch /run/sandbox/source/x 2>&1 || echo read-only"}`)
	assert.Contains(t, text(res), "read-only")
	res = call(t, cs, "bash", bashArgs("COMMIT=1\n"+sandboxWork))
	require.False(t, res.IsError, text(res))
	require.Contains(t, text(res), "done")

	changed := diffSums(before, treeSums(t, w.ws))
	assert.Equal(t, []string{".git/config"}, changed, "nothing of the host's changed but sbx's remote")
	cfg, err := os.ReadFile(filepath.Join(w.ws, ".git/config"))
	require.NoError(t, err)
	assert.Contains(t, string(cfg), `[remote "sandbox-`+name+`"]`)

	k := w.keeper(t, state)
	ch, err := keep.Collect(context.Background(), k, keep.Options{Workspace: w.ws})
	require.NoError(t, err)
	assert.Equal(t, w.ws, ch.Root)
	assert.Equal(t, name, ch.Sandbox)
	assert.Equal(t, keep.BaseRef(name), ch.BaseRef, "land moves this ref")
	base := lsTree(t, ch, ch.Base)
	head := lsTree(t, ch, ch.Head)
	assert.Equal(t, "100644 alpha\nhost edit\n", base["edit-me.txt"], "Base has the host's uncommitted change")
	assert.Contains(t, base, "untracked.txt")
	assert.NotContains(t, base, "notes/todo.txt")
	assert.NotContains(t, base, "build/out.txt", "ignored files are not part of the review")
	assert.Equal(t, "100755 #!/bin/sh\necho run\n", head["run.sh"])
	assert.Equal(t, "100644 package main\n", head["src/new.go"])
	assert.Equal(t, "100644 # demo\nhello world\nsecond line\nedited in the sandbox\n", head["README.md"])
	assert.NotContains(t, head, "deep/a/b/c/file.md")
	assert.Equal(t, base["edit-me.txt"], head["edit-me.txt"])
	for p := range head {
		assert.False(t, strings.HasPrefix(p, ".git/"), "%s: the clone's .git is never part of the work", p)
	}
	unlanded, err := k.Unlanded(context.Background(), ch)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"README.md", "deep/a/b/c/file.md", "run.sh", "src/new.go"}, unlanded)
	assert.Equal(t, []string{".git/config"}, diffSums(before, treeSums(t, w.ws)), "collecting writes nothing of the host's either")

	// The port of the clone's daemon changes with a restart, and sbx rewrites the remote.
	url := gitIn(t, w.ws, "config", "remote.sandbox-"+name+".url")
	w.sim("stop", name)
	w.sim("exec", name, "true")
	assert.NotEqual(t, url, gitIn(t, w.ws, "config", "remote.sandbox-"+name+".url"))

	// Teardown keeps it (stopped): its work is not landed.
	require.NoError(t, cs.Close())
	require.NoError(t, ignoreExit(cmd.Wait()))
	assert.Contains(t, stderr.String(), "keeping sandbox "+name)
	out, _ := w.sim("ls")
	assert.Contains(t, out, name)

	// GC keeps it as long as the work is unlanded, and removes it when forced.
	b := w.sweep(t, state)
	assert.Regexp(t, `kept +`+name+` \(stopped\): its work is kept`, b)
	assert.Contains(t, b, "4 unlanded change(s)")
	b = w.sweep(t, state, "--force")
	assert.Regexp(t, `removed +`+name, b)
	assert.NotContains(t, w.sandboxes(), name)

	kept, err := keep.Collect(context.Background(), k, keep.Options{Workspace: w.ws})
	require.NoError(t, err, "the kept refs outlive the sandbox")
	assert.Equal(t, ch.Base, kept.Base)
	assert.Equal(t, head, lsTree(t, kept, kept.Head))
	assert.Equal(t, before[".git/config"], treeSums(t, w.ws)[".git/config"], "rm took sbx's remote away again")
}

// lsTree reads a commit's files: path -> "mode content".
func lsTree(t *testing.T, ch review.Changes, commit string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, line := range strings.Split(gitIn(t, "/", "--git-dir="+ch.GitDir, "ls-tree", "-r", commit), "\n") {
		meta, path, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta)
		content := gitIn(t, "/", "--git-dir="+ch.GitDir, "cat-file", "blob", f[2])
		files[path] = f[0] + " " + content + "\n"
	}
	return files
}

// bashArgs are the bash tool's arguments for a script.
func bashArgs(script string) string {
	b, _ := json.Marshal(map[string]string{"command": script})
	return string(b)
}

// TestReviewOverlay: review mode on a workspace that is not a git repository mounts it
// read-only with a copy-on-write layer over it in the VM, at the same path: the
// sandbox's edits, deletions, a planted .git/hooks/pre-commit and a chmod +x leave
// every byte of the host tree as it was; Collect reads the upper layer back and returns
// Base and Head (deletions included, the .git directory never); the layer survives a
// restart of the sandbox, and teardown keeps the sandbox while work is unlanded.
func TestReviewOverlay(t *testing.T) {
	w, state := reviewWorld(t, false)
	before := treeSums(t, w.ws)
	cs, cmd, stderr := w.serve(nil, nil, "DOCKER_SANDBOX_WORKSPACE_MODE=review", "XDG_STATE_HOME="+state, "DOCKER_SANDBOX_GC_HOURS=0")
	st := call(t, cs, "pi_sbx_status", `{}`)
	require.False(t, st.IsError, "%s\n%s", text(st), stderr.String())
	name := w.sandboxes()[0]

	res := call(t, cs, "bash", bashArgs("pwd; stat -f -c %T .; cat edit-me.txt\n"+sandboxWork))
	require.False(t, res.IsError, text(res))
	assert.Equal(t, w.ws+"\noverlayfs\nalpha\nbeta\ngamma\ndone\n", text(res))
	res = call(t, cs, "write", `{"path":"notes/new.txt","content":"written by pi's write\n"}`)
	require.False(t, res.IsError, text(res))
	res = call(t, cs, "bash", bashArgs("rm -r src/util && mkdir src/util && echo fresh > src/util/other.go"))
	require.False(t, res.IsError, text(res))
	assert.Empty(t, diffSums(before, treeSums(t, w.ws)), "not one byte of the host's changed")

	k := w.keeper(t, state)
	ch, err := keep.Collect(context.Background(), k, keep.Options{Workspace: w.ws})
	require.NoError(t, err)
	base, head := lsTree(t, ch, ch.Base), lsTree(t, ch, ch.Head)
	assert.Contains(t, base, "build/out.txt", "a non-git workspace is taken whole")
	assert.Equal(t, "100755 #!/bin/sh\necho run\n", head["run.sh"])
	assert.Equal(t, "100644 written by pi's write\n", head["notes/new.txt"])
	assert.Equal(t, "100644 fresh\n", head["src/util/other.go"])
	assert.NotContains(t, head, "src/util/util.go", "a directory replaced (opaque) drops what it had")
	assert.NotContains(t, head, "deep/a/b/c/file.md", "a whiteout is a deletion")
	assert.Equal(t, base["src/main.go"], head["src/main.go"])
	for p := range head {
		assert.False(t, strings.HasPrefix(p, ".git/"), "%s: never part of the work", p)
	}

	// A restart loses the mount, not the layer: the next session lays it again.
	require.NoError(t, cs.Close())
	require.NoError(t, ignoreExit(cmd.Wait()))
	assert.Contains(t, stderr.String(), "keeping sandbox "+name)
	assert.Empty(t, diffSums(before, treeSums(t, w.ws)))
	cs, _, stderr = w.serve(nil, nil, "DOCKER_SANDBOX_WORKSPACE_MODE=review", "XDG_STATE_HOME="+state, "DOCKER_SANDBOX="+name)
	res = call(t, cs, "read", `{"path":"notes/new.txt"}`)
	require.False(t, res.IsError, "%s\n%s", text(res), stderr.String())
	assert.Contains(t, text(res), "written by pi's write")
}

// TestReviewKill9KeepsTheWork: serve killed with kill -9 mid-session leaves its review
// sandbox to the watchdog, which only stops it; GC then starts it, fetches its work and
// keeps it (unlanded), and the work is on the host.
func TestReviewKill9KeepsTheWork(t *testing.T) {
	w, state := reviewWorld(t, true)
	cs, cmd, stderr := w.serve(nil, nil, "DOCKER_SANDBOX_WORKSPACE_MODE=review", "XDG_STATE_HOME="+state, "DOCKER_SANDBOX_GC_HOURS=0")
	res := call(t, cs, "write", `{"path":"after-kill.txt","content":"kept\n"}`)
	require.False(t, res.IsError, "%s\n%s", text(res), stderr.String())
	name := w.sandboxes()[0]
	require.NoError(t, cmd.Process.Kill())
	status := func() string {
		out, _ := w.sim("ls", "--json")
		var ls struct {
			Sandboxes []struct{ Name, Status string } `json:"sandboxes"`
		}
		_ = json.Unmarshal([]byte(out), &ls)
		for _, s := range ls.Sandboxes {
			if s.Name == name {
				return s.Status
			}
		}
		return "gone"
	}
	require.Eventually(t, func() bool { return status() == "stopped" }, 60*time.Second, 200*time.Millisecond, "the watchdog stops it")
	time.Sleep(3 * time.Second) // a watchdog that went on to rm would have by now
	require.Equal(t, "stopped", status(), "and does not remove it")

	b := w.sweep(t, state)
	assert.Regexp(t, `kept +`+name+` \(stopped\): its work is kept: 1 unlanded change\(s\) \(after-kill.txt\)`, b)
	assert.NotEqual(t, "gone", status())

	// The work is on the host now: the next sweep keeps the sandbox on that, without
	// starting it (a start publishes the clone's git daemon on a new port, which sbx
	// writes into the host's remote).
	remote := func() string { return gitIn(t, w.ws, "remote", "get-url", "sandbox-"+name) }
	before := remote()
	b = w.sweep(t, state)
	assert.Regexp(t, `kept +`+name+` \(stopped\): its work is kept: 1 unlanded change\(s\) \(after-kill.txt\)`, b)
	assert.Equal(t, before, remote(), "the second sweep did not start the sandbox")
	assert.Equal(t, "stopped", status())

	k := w.keeper(t, state)
	r, err := k.Store.Load(name)
	require.NoError(t, err)
	ch, err := k.Collect(context.Background(), r)
	require.NoError(t, err)
	assert.Equal(t, "100644 kept\n", lsTree(t, ch, ch.Head)["after-kill.txt"])
}

// TestConcurrentCollects: collects of one sandbox at once (pi's status refresh while the
// user runs `review`) all succeed with the same work; each snapshots into the clone's
// one ref and fetches into the store's one temporary ref, so unserialized, one failed.
func TestConcurrentCollects(t *testing.T) {
	for _, git := range []bool{true, false} {
		t.Run(map[bool]string{true: "clone", false: "overlay"}[git], func(t *testing.T) {
			w, state := reviewWorld(t, git)
			cs, _, stderr := w.serve(nil, nil, "DOCKER_SANDBOX_WORKSPACE_MODE=review", "XDG_STATE_HOME="+state, "DOCKER_SANDBOX_TEARDOWN_FORCE=1")
			res := call(t, cs, "bash", bashArgs(sandboxWork))
			require.False(t, res.IsError, "%s\n%s", text(res), stderr.String())

			k := w.keeper(t, state)
			const n = 6
			got := make([]review.Changes, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got[i], errs[i] = keep.Collect(context.Background(), k, keep.Options{Workspace: w.ws})
				}()
			}
			wg.Wait()
			for i := range n {
				require.NoError(t, errs[i], "collect %d", i)
				tree := func(ch review.Changes) string {
					return gitIn(t, "/", "--git-dir="+ch.GitDir, "rev-parse", ch.Head+"^{tree}")
				}
				assert.Equal(t, tree(got[0]), tree(got[i]), "collect %d's work", i)
			}
			// ...and that work is the sandbox's, not the same wrong answer six times.
			head := lsTree(t, got[0], got[0].Head)
			assert.Equal(t, "100755 #!/bin/sh\necho run\n", head["run.sh"])
			assert.Equal(t, "100644 package main\n", head["src/new.go"])
			assert.NotContains(t, head, "deep/a/b/c/file.md")
		})
	}
}

// TestCollectIsBounded: the sandbox's work is untrusted data; a collect that would bring
// more than the keeper's bound fails, saying so, and moves no ref.
func TestCollectIsBounded(t *testing.T) {
	for _, git := range []bool{true, false} {
		t.Run(map[bool]string{true: "clone", false: "overlay"}[git], func(t *testing.T) {
			w, state := reviewWorld(t, git)
			cs, _, stderr := w.serve(nil, nil, "DOCKER_SANDBOX_WORKSPACE_MODE=review", "XDG_STATE_HOME="+state, "DOCKER_SANDBOX_TEARDOWN_FORCE=1")
			res := call(t, cs, "bash", `{"command":"head -c 300000 /dev/urandom > big.bin && echo ok"}`)
			require.False(t, res.IsError, "%s\n%s", text(res), stderr.String())

			k := w.keeper(t, state)
			k.MaxFetch = 100_000
			_, err := keep.Collect(context.Background(), k, keep.Options{Workspace: w.ws})
			require.ErrorContains(t, err, "the sandbox sent more than 100000 bytes")
			name := w.sandboxes()[0]
			headRecorded := func() error {
				return exec.Command("git", "--git-dir="+k.Store.GitDir(name), "rev-parse", "-q", "--verify", keep.HeadRef(name)).Run()
			}
			assert.Error(t, headRecorded(), "no Head recorded from a collect that failed")

			k.MaxFetch = 0 // the default bound takes it
			ch, err := keep.Collect(context.Background(), k, keep.Options{Workspace: w.ws})
			require.NoError(t, err)
			assert.Contains(t, lsTree(t, ch, ch.Head), "big.bin")
			assert.NoError(t, headRecorded(), "the probe above sees a Head once one is recorded")
		})
	}
}
