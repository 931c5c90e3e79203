//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReleaseReproducible: the same commit builds byte-identical release files (every
// archive, so every binary, and every npm package) wherever it is checked out. HEAD is
// exported with `git archive` to a path of its own and released there; that is compared
// with the release of this checkout when it was built from HEAD with no local changes
// (CI's case), else with a second export at yet another path.
func TestReleaseReproducible(t *testing.T) {
	root, node := piEnv(t)
	rel := releaseDir(t, node)
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", root}, args...)...).Output()
		require.NoError(t, err, "git %v", args)
		return strings.TrimSpace(string(out))
	}
	head, epoch := git("rev-parse", "HEAD"), git("log", "-1", "--format=%ct")
	build := func(at string) string {
		t.Helper()
		src := filepath.Join(t.TempDir(), at)
		require.NoError(t, os.MkdirAll(src, 0o755))
		archive := exec.Command("git", "-C", root, "archive", "--format=tar", "HEAD")
		extract := exec.Command("tar", "-x", "-C", src)
		var err error
		extract.Stdin, err = archive.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, archive.Start())
		out, err := extract.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.NoError(t, archive.Wait())
		dir := filepath.Join(src, "dist/release")
		cmd := exec.Command("bash", "scripts/release.sh", rel.version, dir)
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+":"+os.Getenv("PATH"), "PI_SBX_COMMIT="+head, "SOURCE_DATE_EPOCH="+epoch)
		out, err = cmd.CombinedOutput()
		require.NoError(t, err, "release in %s: %s", src, out)
		return dir
	}

	a := build("elsewhere/src")
	b := rel.dir
	manifest, err := exec.Command("tar", "-xzOf", filepath.Join(rel.dir, "npm", readPackages(t).Pi+"-"+rel.version+".tgz"), "package/backend.json").Output()
	require.NoError(t, err)
	var m struct{ Commit string }
	require.NoError(t, json.Unmarshal(manifest, &m))
	if m.Commit != head || git("status", "--porcelain", "--untracked-files=no") != "" {
		t.Logf("the release under test is not HEAD's (commit %s, local changes?): comparing two exports", m.Commit)
		b = build("a/much/longer/path/to/another/copy")
	}
	files := func(dir string) map[string][]byte {
		t.Helper()
		got := map[string][]byte{}
		require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			got[rel], err = os.ReadFile(p)
			return err
		}))
		return got
	}
	fa, fb := files(a), files(b)
	require.Len(t, fa, 12, "5 archives, 6 npm packages, SHA256SUMS")
	require.Equal(t, len(fb), len(fa))
	for name, data := range fa {
		assert.True(t, bytes.Equal(data, fb[name]), "%s differs between two builds of %s", name, head)
	}
}
