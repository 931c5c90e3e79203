//go:build e2e

package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHostBuildsWhereSbxRuns: the host binary (serve, shell, tool --sandbox) builds for
// every platform Docker Sandboxes runs on, and outside linux it links none of the in-VM
// half (fsops/, shell/, vmagent), whose agent is always a linux build. scripts/test.sh
// also vets those packages per platform.
func TestHostBuildsWhereSbxRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-builds take a few seconds each")
	}
	const mod = "github.com/pi-sbx/pi-sbx-backend/"
	for _, target := range []string{"darwin/arm64", "darwin/amd64", "windows/amd64", "linux/amd64", "linux/arm64"} {
		t.Run(strings.ReplaceAll(target, "/", "-"), func(t *testing.T) {
			goos, goarch, _ := strings.Cut(target, "/")
			env := append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
			// scripts/test.sh's cross-build flags: in CI this then reuses its compiles.
			build := exec.Command("go", "build", "-trimpath", "-o", os.DevNull, ".")
			build.Env = env
			out, err := build.CombinedOutput()
			require.NoError(t, err, "GOOS=%s GOARCH=%s go build ./cmd/pi-sbx-backend:\n%s", goos, goarch, out)

			list := exec.Command("go", "list", "-deps", ".")
			list.Env = env
			deps, err := list.Output()
			require.NoError(t, err)
			for _, inVM := range []string{"internal/vm/fsops", "internal/vm/shell", "internal/vm/vmagent"} {
				linked := strings.Contains("\n"+string(deps), "\n"+mod+inVM+"\n")
				assert.Equal(t, goos == "linux", linked, "%s links %s", target, inVM)
			}
		})
	}
}
