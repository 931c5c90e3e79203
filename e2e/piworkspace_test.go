//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPiInARepoSubdirectory: pi started in repo/pkg/sub mounts the repository's root (the
// status line says so) and its tools work in repo/pkg/sub, as in plain pi: the model's
// `git status` works and its read of ../../README.md finds the file. PI_SBX_WORKSPACE=cwd
// mounts repo/pkg/sub alone, where git finds no repository.
func TestPiInARepoSubdirectory(t *testing.T) {
	calls, err := json.Marshal([][]any{
		{"bash", map[string]string{"command": "pwd; git status --short --branch; echo GIT-RC=$?"}},
		{"read", map[string]string{"path": "../../README.md"}},
	})
	require.NoError(t, err)
	tests := []struct {
		name, setting string
		rootShown     bool   // the status line names the repository's root
		gitRC         string // git status's exit code in the sandbox
		readme        bool   // read ../../README.md found it
	}{
		{"the repository's root", "", true, "GIT-RC=0", true},
		{"PI_SBX_WORKSPACE=cwd", "cwd", false, "GIT-RC=128", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			gitInit(t, w.ws)
			src := filepath.Join(w.ws, "pkg", "sub")
			require.NoError(t, os.MkdirAll(src, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(w.ws, "README.md"), []byte("readme-at-the-root\n"), 0o644))
			out, err := exec.Command("git", "-C", w.ws, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "c1").CombinedOutput()
			require.NoError(t, err, "%s", out)

			p := startPiTUI(t, w, src, "PI_FAUX_CALLS="+string(calls), "PI_SBX_WORKSPACE="+tc.setting)
			p.expect(" ("+modeName(), 30*time.Second)
			assert.Equal(t, tc.rootShown, strings.Contains(p.screen, "(rw, repo root /"), "status line:\n%s", p.screen)

			p.send("go")
			p.expect("turn 1 done", time.Minute)
			t.Logf("after the calls:\n%s", p.screen)
			assert.Contains(t, p.screen, src, "the tools' cwd is pi's")
			assert.Contains(t, p.screen, tc.gitRC)
			// pi's TUI folds a read's content away but shows its error.
			assert.Equal(t, !tc.readme, strings.Contains(p.screen, "ENOENT"), "read ../../README.md")

			p.send("/sandbox")
			p.expect("shell: DOCKER_SANDBOX=", 30*time.Second)
			want := "workspace: " + src + " (" + modeName() + ", pi's cwd)"
			if tc.rootShown {
				want = "workspace: " + w.ws + " (" + modeName() + ", the git"
			}
			assert.Contains(t, p.screen, want)
		})
	}
}
