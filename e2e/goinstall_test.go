//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGoInstall: `go install github.com/pi-sbx/pi-sbx-backend/cmd/pi-sbx-backend@vX`
// works, and gives a binary that knows its version from Go's stamp and carries no agents:
// it is its own agent on a linux host of the VM's architecture, and for the other one it
// names the command that builds it. HEAD is served as version v0.0.1-e2e by a module
// proxy in a directory (its dependencies from the module cache's own download
// directory, so nothing is fetched), into a module cache of the test's own.
func TestGoInstall(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	const mod, version = "github.com/pi-sbx/pi-sbx-backend", "v0.0.1-e2e"
	dir := t.TempDir()
	at := filepath.Join(dir, "proxy", mod, "@v")
	require.NoError(t, os.MkdirAll(at, 0o755))
	out, err := exec.Command("git", "-C", root, "archive", "--format=zip", "--prefix="+mod+"@"+version+"/",
		"-o", filepath.Join(at, version+".zip"), "HEAD").CombinedOutput()
	require.NoError(t, err, "%s", out)
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(at, version+".mod"), gomod, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(at, version+".info"), []byte(`{"Version":"`+version+`","Time":"2026-01-01T00:00:00Z"}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(at, "list"), []byte(version+"\n"), 0o644))
	cache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	require.NoError(t, err)

	bin := filepath.Join(dir, "bin")
	cmd := exec.Command("go", "install", mod+"/cmd/pi-sbx-backend@"+version)
	cmd.Dir = dir // outside this module: what a user's go install sees
	cmd.Env = append(os.Environ(), "GOBIN="+bin, "CGO_ENABLED=0", "GOFLAGS=-modcacherw",
		"GOMODCACHE="+filepath.Join(dir, "modcache"), "GOSUMDB=off",
		"GOPROXY=file://"+filepath.Join(dir, "proxy")+",file://"+filepath.Join(strings.TrimSpace(string(cache)), "cache/download"))
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "go install: %s", out)

	exe := filepath.Join(bin, "pi-sbx-backend")
	out, err = exec.Command(exe, "version").CombinedOutput()
	require.NoError(t, err, "%s", out)
	v := string(out)
	assert.True(t, strings.HasPrefix(v, "pi-sbx-backend 0.0.1-e2e\n"), "the module's version: %s", v)
	other := map[string]string{"amd64": "arm64", "arm64": "amd64"}[runtime.GOARCH]
	assert.Contains(t, v, "agent linux/"+runtime.GOARCH+": sha256 ", "its own agent here")
	assert.Contains(t, v, "agent linux/"+other+": none (no agent binary for linux/"+other+": this build carries none")
	assert.Contains(t, v, "GOOS=linux GOARCH="+other+" CGO_ENABLED=0 go build -o "+filepath.Join(bin, "pi-sbx-backend-linux-"+other))
}
