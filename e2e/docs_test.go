//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/doccheck"
	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
)

// TestDocBlocksRun runs every command block of README.md and docs/ (```sh, not marked
// no-run) as a reader would paste it: in bash with -e and pipefail, in a project of its
// own (the fixture workspace), with `pi-sbx-backend` and `sbx` (sbxsim) on PATH, a fresh
// HOME, and sbxsim's settings allowlisted as the docs say to. Each block is its own
// subtest; the count of blocks run (and of those not run, with their reasons) is logged.
// A block that needs a release (```sh release) runs in a directory holding what the
// README says to copy from one (runReleaseBlock).
func TestDocBlocksRun(t *testing.T) {
	root := testbin.Root()
	pages, err := doccheck.UserPages(root)
	require.NoError(t, err)
	blocks, err := doccheck.Blocks(root, pages)
	require.NoError(t, err)
	ran, skipped := 0, 0
	for _, b := range blocks {
		if !b.Runnable() {
			if b.NoRunMarked {
				skipped++
				t.Logf("not run: %s: %s", b, b.NoRun)
			}
			continue
		}
		ran++
		t.Run(strings.ReplaceAll(b.String(), " ", "_"), func(t *testing.T) {
			if b.Needs == "release" {
				runReleaseBlock(t, b)
				return
			}
			w := newWorld(t)
			bin := t.TempDir()
			require.NoError(t, os.Symlink(backendBin, filepath.Join(bin, "pi-sbx-backend")))
			require.NoError(t, os.Symlink(simBin, filepath.Join(bin, "sbx")))
			require.NoError(t, os.Symlink(simBin, filepath.Join(bin, "sbxsim")))
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // bounds a hang only
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", b.Text)
			cmd.Dir = w.ws
			cmd.Env = append(w.env(), "PATH="+bin+":"+os.Getenv("PATH"), "HOME="+t.TempDir())
			out, err := cmd.CombinedOutput()
			t.Logf("%s:\n%s\n--- output:\n%s", b, b.Text, out)
			require.NoError(t, err, "%s failed:\n%s", b, out)
			require.Empty(t, w.sandboxes(), "%s left a sandbox behind", b)
		})
	}
	t.Logf("ran %d command blocks of %d pages; %d marked no-run", ran, len(pages), skipped)
	require.Positive(t, ran)
}

// releaseBlockVersion is how the README's install block names the release and the
// platform; the test runs it with the release it has and this machine's platform.
const releaseBlockVersion = "v=0.1.0 p=darwin-arm64"

// runReleaseBlock runs an install block from a release: in a directory holding
// SHA256SUMS, this platform's archive and the pi package, as the README says to copy
// them, with a fresh HOME and pi (1.6.0) on PATH. Then the installed pi package itself
// (its src/binary.ts, from the unpacked release) must find and accept the installed
// binary, as it will when pi loads it.
func runReleaseBlock(t *testing.T, b doccheck.Block) {
	root, node := piEnv(t)
	rel := releaseDir(t, node)
	platform := runtime.GOOS + "-" + runtime.GOARCH
	require.Contains(t, b.Text, releaseBlockVersion, "%s: the test replaces this line's version and platform", b)
	dir, home := t.TempDir(), t.TempDir()
	archive := fmt.Sprintf("pi-sbx-backend-%s-%s.tar.gz", rel.version, platform)
	pkg := fmt.Sprintf("%s-%s.tgz", readPackages(t).Pi, rel.version)
	for from, to := range map[string]string{"SHA256SUMS": "SHA256SUMS", archive: archive, filepath.Join("npm", pkg): pkg} {
		data, err := os.ReadFile(filepath.Join(rel.dir, from))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, to), data, 0o644))
	}
	text := strings.Replace(b.Text, releaseBlockVersion, fmt.Sprintf("v=%s p=%s", rel.version, platform), 1)
	path := filepath.Dir(node) + ":" + filepath.Join(root, "extension/node_modules/.bin") + ":/usr/bin:/bin"
	env := []string{"HOME=" + home, "PATH=" + path}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // bounds a hang only
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", text)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	t.Logf("%s:\n%s\n--- output:\n%s", b, text, out)
	require.NoError(t, err, "%s failed:\n%s", b, out)
	assert.Contains(t, string(out), "pi-sbx-backend-"+rel.version+"-"+platform+".tar.gz: OK")

	settings, err := os.ReadFile(filepath.Join(home, ".pi/agent/settings.json"))
	require.NoError(t, err, "pi install wrote pi's settings")
	installed := filepath.Join(home, ".local/share/pi-sbx/package")
	assert.Contains(t, string(settings), ".local/share/pi-sbx/package", "pi loads the unpacked package")
	find := exec.CommandContext(ctx, node, "--input-type=module", "-e",
		`const {findBackend} = await import(process.argv[1]); console.log(await findBackend());`,
		filepath.Join(installed, "src/binary.ts"))
	find.Env = env
	got, err := find.CombinedOutput()
	require.NoError(t, err, "the installed package refuses the installed binary: %s", got)
	assert.Equal(t, filepath.Join(home, ".local/bin/pi-sbx-backend"), strings.TrimSpace(string(got)))
}
