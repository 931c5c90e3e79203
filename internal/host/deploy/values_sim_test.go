//go:build e2e

package deploy

import (
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"

	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scanArgv watches every process's argv until stop is closed and reports whether needle
// was ever seen.
func scanArgv(needle string, stop <-chan struct{}) *atomic.Bool {
	var seen atomic.Bool
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
			for _, p := range paths {
				if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), needle) {
					seen.Store(true)
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return &seen
}

func callText(t *testing.T, d *Deployer, name string, args any) (string, bool) {
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	res, err := d.CallTool(context.Background(), mcpserver.Call{Name: name, Args: raw})
	require.NoError(t, err)
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.(*mcp.TextContent).Text)
	}
	return b.String(), res.IsError
}

// TestValuesNeverInArgv: docker_run's env values and docker_build's build args reach the
// container and the build, but no process's argv (host or VM) ever shows them.
func TestValuesNeverInArgv(t *testing.T) {
	w := newSimWorld(t)
	w.create("deploy-values")
	d := w.deployer("deploy-values", w.environ())
	const secret = "s3cr3t-value-4711"
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, "b"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "b", "Dockerfile"), []byte("FROM busybox:latest\nARG TOKEN\nRUN echo \"$TOKEN\" | wc -c > /len\n"), 0o644))

	stop := make(chan struct{})
	seen := scanArgv(secret, stop)
	defer close(stop)

	out, isErr := callText(t, d, "docker_run", map[string]any{"image": "busybox:latest", "detach": false, "rm": true,
		"env": []string{"SECRET=" + secret, "PATH=/bin:/usr/bin"}, "command": []string{"sh", "-c", "sleep 0.5; echo got=$SECRET path=$PATH"}})
	require.False(t, isErr, out)
	assert.Contains(t, out, "got="+secret)
	assert.Contains(t, out, "path=/bin:/usr/bin", "a value named PATH goes to the container, not to the script")
	out, isErr = callText(t, d, "docker_build", map[string]any{"context": "b", "tag": "b:1", "buildargs": `{"TOKEN":"` + secret + `"}`})
	require.False(t, isErr, out)
	out, isErr = callText(t, d, "docker_run", map[string]any{"image": "b:1", "detach": false, "rm": true, "command": "cat /len"})
	require.False(t, isErr, out)
	assert.Equal(t, "18", strings.TrimSpace(out), "the build saw the build arg (17 characters and a newline)")
	assert.False(t, seen.Load(), "a value appeared in some process's argv")
	ls, code := w.sim("exec", "deploy-values", "--", "sh", "-c", "ls /tmp")
	require.Zero(t, code)
	assert.NotContains(t, ls, "tmp.", "the env file is removed")
}
