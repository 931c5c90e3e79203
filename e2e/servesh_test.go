//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoCopy copies the repository's files (tracked and new, not ignored) into a fresh
// directory, so a test can serve "the repo" as the README's main command does without
// letting a sandbox near the real checkout.
func repoCopy(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "-C", "..", "ls-files", "-co", "--exclude-standard", "-z").Output()
	require.NoError(t, err)
	dst := t.TempDir()
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join("..", f)
		fi, err := os.Lstat(src)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the work tree, or a link (.cache)
		}
		data, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(dst, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dst, f), data, fi.Mode().Perm()))
	}
	return dst
}

// goEnv keeps Go's own caches where they are (warm), whatever HOME or XDG_CACHE_HOME
// the test gives the script.
func goEnv(t *testing.T) []string {
	t.Helper()
	var env []string
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOPROXY"} {
		out, err := exec.Command("go", "env", k).Output()
		require.NoError(t, err)
		env = append(env, k+"="+strings.TrimSpace(string(out)))
	}
	return env
}

// TestServeShMainCommandRunsNothingTheSandboxWrites is the README's main command, `bash
// scripts/serve.sh --workspace "$PWD"` run in the repository (a copy of it), attacked
// from inside: a bash call overwrites, through the workspace, every file serve runs on
// the host (its sbx program, its own binary) with a script that would leave a marker on
// the host. serve.sh builds outside the repository, so none of them is in the sandbox's
// reach: the marker never appears, not even after teardown ran sbx.
func TestServeShMainCommandRunsNothingTheSandboxWrites(t *testing.T) {
	w := newWorld(t)
	repo := repoCopy(t)
	cache := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran-on-the-host")
	cmd := exec.Command("bash", filepath.Join(repo, "scripts/serve.sh"), "--workspace", repo)
	cmd.Dir = repo
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "PI_SBX_CACHE=" + cache,
		"SBXSIM_STATE=" + w.state, "SBXSIM_DOCKER=0",
	}, goEnv(t)...)
	stderr := &testbin.SyncBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a cold build
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err, stderr.String())
	defer cs.Close()

	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", cmd.Process.Pid))
	require.NoError(t, err)
	var sbxBin string
	for _, kv := range strings.Split(string(environ), "\x00") {
		if v, ok := strings.CutPrefix(kv, "PI_SBX_BIN="); ok {
			sbxBin = v
		}
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", cmd.Process.Pid))
	require.NoError(t, err)
	require.NotEmpty(t, sbxBin)
	for _, p := range []string{sbxBin, exe} {
		assert.False(t, strings.HasPrefix(p, repo+"/"), "%s is inside the served workspace", p)
		assert.True(t, strings.HasPrefix(p, cache+"/"), "%s: serve.sh builds into PI_SBX_CACHE", p)
	}

	evil := "#!/bin/sh\\ntouch " + marker + "\\n"
	attack := fmt.Sprintf(`for f in %s %s %s/bin/sbx %s/bin/pi-sbx-backend; do printf '%s' > "$f" 2>/dev/null && echo "wrote $f"; done; true`,
		strconv.Quote(sbxBin), strconv.Quote(exe), repo, repo, evil)
	args, _ := json.Marshal(map[string]string{"command": attack})
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: json.RawMessage(args)})
	require.NoError(t, err, stderr.String())
	require.False(t, res.IsError, "%s\n%s", text(res), stderr)
	assert.NotContains(t, text(res), "wrote "+sbxBin)
	assert.NotContains(t, text(res), "wrote "+exe)

	call(t, cs, "ls", `{}`) // serve runs sbx again after the attack
	require.NoError(t, cs.Close())
	require.NoError(t, ignoreExit(cmd.Wait()), stderr.String())
	assert.Empty(t, w.sandboxes(), "torn down (by running sbx)")
	assert.NoFileExists(t, marker, "the host ran a file the sandbox wrote")
	assert.NoDirExists(t, filepath.Join(repo, "bin"), "serve.sh put nothing into the repository")
}

// TestServeShSaysWhatIsMissing: on a machine without the simulator's prerequisites (here
// `ip` hidden in a private mount namespace), the main command fails at once with one
// line naming what is missing and how to get it, before building or serving.
func TestServeShSaysWhatIsMissing(t *testing.T) {
	newWorld(t) // root
	ip, err := exec.LookPath("ip")
	require.NoError(t, err)
	ip, err = filepath.EvalSymlinks(ip)
	require.NoError(t, err)
	cache := t.TempDir()
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c",
		`mount --bind /dev/null "$1" && shift && exec bash "$@"`, "sh", ip, "../scripts/serve.sh", "--workspace", t.TempDir())
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "PI_SBX_CACHE=" + cache}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	assert.Equal(t, 1, exitCode(err), stderr.String())
	assert.Empty(t, stdout.String())
	assert.Equal(t, "serve.sh: sbxsim needs ip, not found: run apt-get install -y iproute2 (or bash scripts/setup.sh, which installs everything the tests need)\n", stderr.String())
	entries, _ := os.ReadDir(cache)
	assert.Empty(t, entries, "nothing built")
}
