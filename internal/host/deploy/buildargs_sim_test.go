//go:build e2e

package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBuildArgCannotRunAWorkspacePlugin: DOCKER_CONFIG (or HOME) as a build-arg name
// made the CLI read a workspace config that named a workspace docker-buildx plugin,
// which ran as root in the sandbox, outside any container, and the call said "Built".
// Now the name is refused and the plugin never runs; many ordinary build args still
// reach the build.
func TestBuildArgCannotRunAWorkspacePlugin(t *testing.T) {
	w := newSimWorld(t)
	const sandbox = "deploy-buildargs"
	w.create(sandbox)
	d := w.deployer(sandbox, w.environ())
	marker := filepath.Join(w.ws, "plugin-ran")
	writeFiles(t, w.ws, map[string]string{
		"cfg/config.json":          `{"cliPluginsExtraDirs":["` + filepath.Join(w.ws, "plugins") + `"],"aliases":{"builder":"buildx"}}`,
		"home/.docker/config.json": `{"cliPluginsExtraDirs":["` + filepath.Join(w.ws, "plugins") + `"],"aliases":{"builder":"buildx"}}`,
		"plugins/docker-buildx":    "#!/bin/sh\nif [ \"$1\" = docker-cli-plugin-metadata ]; then echo '{\"SchemaVersion\":\"0.1.0\",\"Vendor\":\"x\",\"Version\":\"v0.99.0\"}'; exit 0; fi\ntouch " + marker + "\n",
		"b/Dockerfile":             "FROM busybox:latest\nARG A1\nARG A999\nRUN echo \"$A1-$A999\" > /args\n",
	})
	require.NoError(t, os.Chmod(filepath.Join(w.ws, "plugins/docker-buildx"), 0o755))
	for _, args := range []string{`{"DOCKER_CONFIG":"` + filepath.Join(w.ws, "cfg") + `"}`, `{"HOME":"` + filepath.Join(w.ws, "home") + `"}`} {
		out, isErr := callText(t, d, "docker_build", map[string]any{"context": "b", "tag": "b:1", "buildargs": args})
		assert.True(t, isErr, out)
		assert.NotContains(t, out, "Built", out)
		assert.NoFileExists(t, marker, "the workspace plugin ran")
	}
	m := map[string]string{}
	for i := 0; i < 1000; i++ {
		m[fmt.Sprintf("A%d", i)] = fmt.Sprintf("v%d", i)
	}
	raw, _ := json.Marshal(m)
	out, isErr := callText(t, d, "docker_build", map[string]any{"context": "b", "tag": "b:2", "buildargs": string(raw)})
	require.False(t, isErr, out)
	out, isErr = callText(t, d, "docker_run", map[string]any{"image": "b:2", "detach": false, "rm": true, "command": "cat /args"})
	require.False(t, isErr, out)
	assert.Equal(t, "v1-v999", strings.TrimSpace(out))
}
