//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCloudShipsAskedPaths: PI_SBX_CLOUD_SHIP ships ignored or left-out paths into the
// cloud sandbox at their absolute paths — a .gitignored directory and one of the
// default list's (node_modules), in a git workspace (beside the bundle) and a plain one
// — while what is not asked for stays on the host; what the sandbox changes there does
// not come back with land.
func TestCloudShipsAskedPaths(t *testing.T) {
	for _, git := range []bool{true, false} {
		t.Run(map[bool]string{true: "git", false: "plain"}[git], func(t *testing.T) {
			w, state := reviewWorld(t, git)
			for name, body := range map[string]string{
				"node_modules/dep/index.js": "module.exports = 1\n", "node_modules/other/x.js": "x\n",
				".env": "SECRET=1\n", ".gitignore": "build/\nnode_modules/\n.env\n",
			} {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(w.ws, name)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(w.ws, name), []byte(body), 0o644))
			}
			before := treeSums(t, w.ws)
			env := cloudEnv(state, "PI_SBX_CLOUD_SHIP=build, node_modules/dep")
			cs, cmd, stderr := w.serve(nil, nil, env...)

			res := call(t, cs, "bash", `{"command":"pwd; cat build/out.txt `+w.ws+`/node_modules/dep/index.js; test -e node_modules/other || echo other-not-shipped; test -e .env || echo env-not-shipped"}`)
			require.False(t, res.IsError, "%s\n%s", text(res), stderr.String())
			assert.Equal(t, w.ws+"\nhello from build\nmodule.exports = 1\nother-not-shipped\nenv-not-shipped\n", text(res))
			if git {
				res = call(t, cs, "bash", `{"command":"git status --short"}`)
				assert.Equal(t, " M .gitignore\n M edit-me.txt\n D notes/todo.txt\n?? untracked.txt\n", text(res), "the asked paths stay ignored in the clone")
			}

			res = call(t, cs, "bash", `{"command":"echo rebuilt > build/out.txt && echo new > new.txt"}`)
			require.False(t, res.IsError, text(res))
			land := command(backendBin, w.env(env...), "land", "--all")
			land.Dir = w.ws
			out, err := land.CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.Equal(t, []string{"new.txt"}, diffSums(before, treeSums(t, w.ws)), "an asked path is shipped, never brought back")

			require.NoError(t, cs.Close())
			require.NoError(t, ignoreExit(cmd.Wait()))
		})
	}
}

// TestCloudShipRefusesBadPaths: a PI_SBX_CLOUD_SHIP path that does not exist or leads
// out of the workspace stops the session before any sandbox is made, in one line.
func TestCloudShipRefusesBadPaths(t *testing.T) {
	w, state := reviewWorld(t, false)
	outside := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(w.ws, "out")))
	require.NoError(t, os.Mkdir(filepath.Join(outside, "secret"), 0o755))
	for _, tc := range []struct{ ship, want string }{
		{"build,missing", "PI_SBX_CLOUD_SHIP: missing does not exist in the workspace " + w.ws},
		{"out/secret", "PI_SBX_CLOUD_SHIP: out/secret is outside the workspace " + w.ws + " (through a symbolic link)"},
		{"../up", `PI_SBX_CLOUD_SHIP: "../up" is outside the workspace`},
	} {
		sh := command(backendBin, w.env(cloudEnv(state, "PI_SBX_CLOUD_SHIP="+tc.ship)...), "shell", "--", "true")
		sh.Dir = w.ws
		out, err := sh.CombinedOutput()
		require.Error(t, err, "%s", out)
		line, _, _ := strings.Cut(string(out), "\n")
		assert.Contains(t, line, tc.want, "one line: %s", out)
		assert.Empty(t, w.cloudSandboxes(), "no sandbox made")
	}
}
