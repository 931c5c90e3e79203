//go:build e2e

package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSmallerPromises: each of these failed on main. docker_prune keeps the images (the
// base images an offline sandbox cannot pull again) unless all=true; docker_init writes
// through no planted link; docker_curl returns up to its documented 256 KB; docker_exec
// without a command runs the container's own; docker_status after docker_sandbox_rm says
// the session's sandbox was removed.
func TestSmallerPromises(t *testing.T) {
	w := newSimWorld(t)
	const sandbox = "deploy-small"
	w.create(sandbox)
	d := w.deployer(sandbox, w.environ())
	images := func() string {
		out, isErr := callText(t, d, "docker_images", map[string]any{})
		require.False(t, isErr, out)
		return out
	}

	t.Run("prune keeps images", func(t *testing.T) {
		writeFiles(t, w.ws, map[string]string{"img/Dockerfile": "FROM busybox:latest\nRUN echo x > /x\n"})
		out, isErr := callText(t, d, "docker_build", map[string]any{"context": "img", "tag": "kept:1"})
		require.False(t, isErr, out)
		out, isErr = callText(t, d, "docker_prune", map[string]any{})
		require.False(t, isErr, out)
		assert.Contains(t, images(), "busybox:latest")
		assert.Contains(t, images(), "kept:1")
	})

	t.Run("init follows no planted link", func(t *testing.T) {
		require.NoError(t, os.MkdirAll(filepath.Join(w.ws, "app"), 0o755))
		require.NoError(t, os.Symlink("/tmp/pi-sbx-planted", filepath.Join(w.ws, "app", "Dockerfile.pi-sbx-tmp")))
		out, isErr := callText(t, d, "docker_init", map[string]any{"context": "app"})
		require.False(t, isErr, out)
		fi, err := os.Lstat(filepath.Join(w.ws, "app", "Dockerfile"))
		require.NoError(t, err)
		assert.True(t, fi.Mode().IsRegular(), "Dockerfile is a file, not a link")
		ls, code := w.sim("exec", sandbox, "--", "ls", "/tmp")
		require.Zero(t, code, ls)
		assert.NotContains(t, ls, "pi-sbx-planted", "nothing was written through the link")
		out, isErr = callText(t, d, "docker_init", map[string]any{"context": "app"})
		require.True(t, isErr)
		assert.Contains(t, out, "app/Dockerfile exists")
		assert.NotContains(t, out, w.ws, "errors name workspace-relative paths only")
	})

	t.Run("curl returns up to 256 KB", func(t *testing.T) {
		out, isErr := callText(t, d, "docker_run", map[string]any{"image": "busybox:latest", "name": "big", "ports": []string{"8080"},
			"command": []string{"sh", "-c", "mkdir /www; head -c 204800 /dev/zero | tr '\\000' a > /www/big; httpd -f -p 8080 -h /www"}})
		require.False(t, isErr, out)
		u := regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+/`).FindString(out)
		require.NotEmpty(t, u, out)
		var body string
		for i := 0; i < 50 && !strings.Contains(body, "HTTP 200"); i++ {
			body, _ = callText(t, d, "docker_curl", map[string]any{"url": u + "big"})
		}
		assert.Contains(t, body, strings.Repeat("a", 204800), "the whole 200 KB body")
		assert.NotContains(t, body, "omitted")
	})

	t.Run("exec runs the container's own command", func(t *testing.T) {
		out, isErr := callText(t, d, "docker_run", map[string]any{"image": "busybox:latest", "name": "own",
			"command": []string{"sh", "-c", "if [ -f /tmp/once ]; then echo own-command-again; else touch /tmp/once; sleep 300; fi"}})
		require.False(t, isErr, out)
		out, isErr = callText(t, d, "docker_exec", map[string]any{"id": "own"})
		require.False(t, isErr, out)
		assert.Contains(t, out, "own-command-again")
	})

	t.Run("prune all=true removes unused images", func(t *testing.T) {
		out, isErr := callText(t, d, "docker_rm", map[string]any{"id": "big"})
		require.False(t, isErr, out)
		out, isErr = callText(t, d, "docker_prune", map[string]any{"all": true})
		require.False(t, isErr, out)
		assert.NotContains(t, images(), "kept:1")
	})

	t.Run("status after sandbox_rm", func(t *testing.T) {
		out, isErr := callText(t, d, "docker_sandbox_rm", map[string]any{})
		require.False(t, isErr, out)
		out, isErr = callText(t, d, "docker_status", map[string]any{})
		require.False(t, isErr, out)
		assert.NotContains(t, out, "created on first use")
		assert.Contains(t, out, fmt.Sprintf("Sandbox: %s (removed by docker_sandbox_rm", sandbox))
	})
}
