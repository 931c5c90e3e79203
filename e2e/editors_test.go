//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/doccheck"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/lifecycle"
	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
)

// The documentation's editor configurations name these placeholders for the user's own
// paths.
const (
	readmeBinary  = "/usr/local/bin/pi-sbx-backend"
	readmeProject = "/home/me/project"
)

// editorConfigs returns the documentation's client configurations: the blocks of
// README.md and docs/ marked `<!-- editor-config: NAME -->`, by name.
func editorConfigs(t testing.TB) map[string]string {
	t.Helper()
	root := testbin.Root()
	pages, err := doccheck.UserPages(root)
	require.NoError(t, err)
	blocks, err := doccheck.Blocks(root, pages)
	require.NoError(t, err)
	configs := map[string]string{}
	for _, b := range blocks {
		if b.Config != "" {
			require.NotContains(t, configs, b.Config, "%s: a second editor-config %s", b, b.Config)
			configs[b.Config] = b.Text
		}
	}
	return configs
}

// editorConfig is one snippet with the placeholders replaced: this test's binary, and the
// workspace for the project (the editors' own variables stand for it too).
func editorConfig(t testing.TB, name, workspace string) string {
	t.Helper()
	snippet, ok := editorConfigs(t)[name]
	require.True(t, ok, "the docs have no editor-config %q", name)
	r := strings.NewReplacer(readmeBinary, backendBin, readmeProject, workspace, "${workspaceFolder}", workspace, `"$PWD"`, workspace)
	return r.Replace(snippet)
}

// launch is a program an editor starts: command, arguments, variables.
type launch struct {
	Command string            `json:"command"`
	Path    string            `json:"path"` // a VS Code terminal profile's name for it
	Type    string            `json:"type"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	Options struct {
		Env map[string]string `json:"env"`
	} `json:"options"`
}

func (l launch) environ(w *world) []string {
	env := w.env()
	for k, v := range l.Env {
		env = append(env, k+"="+v)
	}
	for k, v := range l.Options.Env {
		env = append(env, k+"="+v)
	}
	return env
}

// TestEditorConfigsInDocs runs each client configuration of the docs as written:
// valid JSON of the editor's shape, an absolute path to the binary, and serve (or shell)
// started with exactly those arguments and variables (plus sbxsim's) answering a real
// MCP client with content only (no details for the editor to show the model instead) —
// in the project's own sandbox, which they all share.
func TestEditorConfigsInDocs(t *testing.T) {
	mcpServers := []struct{ name, key string }{
		{"vscode-mcp", "servers"}, {"cursor", "mcpServers"}, {"zed", "context_servers"}, {"mcphub", "mcpServers"},
	}
	// Every configuration in the docs is run: here, or by the real client's test.
	elsewhere := map[string]string{"claude": "TestClaudeCodeDrivesServe", "codex": "TestCodexDrivesServe"}
	for name := range editorConfigs(t) {
		known := elsewhere[name] != "" || name == "vscode-terminal" || name == "vscode-task"
		for _, tc := range mcpServers {
			known = known || tc.name == name
		}
		assert.True(t, known, "editor-config %s is run by no test", name)
	}
	w := newWorld(t)
	project := lifecycle.ProjectName(w.ws)
	long := longFile(t, w.ws)
	for _, tc := range mcpServers {
		t.Run(tc.name, func(t *testing.T) {
			raw := editorConfigs(t)[tc.name]
			var asWritten map[string]map[string]launch
			require.NoError(t, json.Unmarshal([]byte(raw), &asWritten), "docs snippet %s is not JSON:\n%s", tc.name, raw)
			require.Contains(t, asWritten, tc.key, "the key %s expects", tc.name)
			require.Equal(t, readmeBinary, asWritten[tc.key][mcpServerName].Command, "an absolute path: GUI apps have a bare PATH")
			if tc.name == "vscode-mcp" {
				assert.Equal(t, "stdio", asWritten[tc.key][mcpServerName].Type)
			}

			var cfg map[string]map[string]launch
			require.NoError(t, json.Unmarshal([]byte(editorConfig(t, tc.name, w.ws)), &cfg))
			l := cfg[tc.key][mcpServerName]
			require.NotEmpty(t, l.Args)
			assert.Equal(t, "serve", l.Args[0])
			cmd := exec.Command(l.Command, l.Args...)
			cmd.Dir, cmd.Env = "/", l.environ(w) // an editor's own directory, not the project's
			cs, err := mcp.NewClient(&mcp.Implementation{Name: tc.name}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
			require.NoError(t, err)
			defer cs.Close()
			res := call(t, cs, "ls", `{}`)
			require.False(t, res.IsError, text(res))
			assert.Contains(t, text(res), "README.md", "serve lists the project")
			res = call(t, cs, "read", long)
			require.False(t, res.IsError, text(res))
			assert.Contains(t, text(res), "Use offset=", "the model reads the file and pi's note")
			assert.Empty(t, detailKeys(res.StructuredContent), "no truncation record that an editor would show the model instead")
			assert.Equal(t, []string{project}, w.sandboxes(), "the project's own sandbox")
		})
	}

	t.Run("vscode-terminal", func(t *testing.T) {
		var cfg map[string]map[string]launch
		require.NoError(t, json.Unmarshal([]byte(editorConfig(t, "vscode-terminal", w.ws)), &cfg))
		profiles := cfg["terminal.integrated.profiles.osx"]
		require.Contains(t, profiles, "pi-sbx shell")
		shellIn(t, w, profiles["pi-sbx shell"], w.ws) // VS Code opens a terminal in the workspace folder
	})
	t.Run("vscode-task", func(t *testing.T) {
		var cfg struct {
			Tasks []launch `json:"tasks"`
		}
		require.NoError(t, json.Unmarshal([]byte(editorConfig(t, "vscode-task", w.ws)), &cfg))
		require.Len(t, cfg.Tasks, 1)
		shellIn(t, w, cfg.Tasks[0], "/")
	})
}

// shellIn runs a configured `pi-sbx-backend shell` in dir with a command on its stdin
// (as a terminal would type it) and checks it ran in the project's sandbox.
func shellIn(t *testing.T, w *world, l launch, dir string) {
	t.Helper()
	bin := l.Command
	if bin == "" {
		bin = l.Path
	}
	require.Equal(t, backendBin, bin)
	require.NotEmpty(t, l.Args)
	assert.Equal(t, "shell", l.Args[0])
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, l.Args...)
	cmd.Dir, cmd.Env = dir, l.environ(w)
	cmd.Stdin = strings.NewReader("pwd; test -f README.md && echo in-the-project\n")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, w.ws+"\nin-the-project\n", string(out))
	assert.Equal(t, []string{lifecycle.ProjectName(w.ws)}, w.sandboxes(), "the project's own sandbox, kept")
}
