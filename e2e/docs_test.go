//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/doccheck"
	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
)

// TestDocBlocksRun runs every command block of README.md and docs/ (```sh, not marked
// no-run) as a reader would paste it: in bash with -e and pipefail, in a project of its
// own (the fixture workspace), with `pi-sbx-backend` and `sbx` (sbxsim) on PATH, a fresh
// HOME, and sbxsim's settings allowlisted as the docs say to. Each block is its own
// subtest; the count of blocks run (and of those not run, with their reasons) is logged.
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
