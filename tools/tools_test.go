package tools

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/result"
)

func echoTool(calls *[]string) *Tool {
	return &Tool{
		Name: "echo",
		Schema: object([]string{"text"}, map[string]*jsonschema.Schema{
			"text":  str("what to echo"),
			"times": num("how often"),
		}),
		Prepare: func(m map[string]any) (map[string]any, error) {
			if s, ok := m["legacy"].(string); ok {
				m["text"] = s
				delete(m, "legacy")
			}
			return m, nil
		},
		Run: func(_ context.Context, cwd string, args json.RawMessage, _ Env) (result.Result, error) {
			*calls = append(*calls, string(args))
			var a struct{ Text string }
			if err := json.Unmarshal(args, &a); err != nil {
				return result.Result{}, err
			}
			if a.Text == "boom" {
				return result.Result{}, errors.New("it threw")
			}
			return result.Text(cwd+":"+a.Text, nil), nil
		},
	}
}

func TestCall(t *testing.T) {
	tests := []struct {
		name, tool, args string
		usage            string // non-empty: want an ErrUsage containing this
		want             result.Result
	}{
		{name: "ok", tool: "echo", args: `{"text":"hi"}`, want: result.Text("/w:hi", nil)},
		{name: "extra properties are allowed", tool: "echo", args: `{"text":"hi","x":1}`, want: result.Text("/w:hi", nil)},
		{name: "prepare runs before validation", tool: "echo", args: `{"legacy":"old"}`, want: result.Text("/w:old", nil)},
		{name: "thrown error", tool: "echo", args: `{"text":"boom"}`, want: result.Thrown(errors.New("it threw"))},
		{name: "unknown tool", tool: "nope", args: `{}`, usage: `unknown tool "nope" (have echo)`},
		{name: "malformed", tool: "echo", args: `{"text":`, usage: "not valid JSON"},
		{name: "trailing data", tool: "echo", args: `{"text":"a"} {}`, usage: "trailing data"},
		{name: "not an object", tool: "echo", args: `"text"`, usage: "must be a JSON object"},
		{name: "missing required", tool: "echo", args: `{}`, usage: "text"},
		{name: "wrong type", tool: "echo", args: `{"text":"a","times":"3"}`, usage: "times"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls []string
			reg, err := New(echoTool(&calls))
			require.NoError(t, err)
			got, err := reg.Call(context.Background(), "/w", tt.tool, []byte(tt.args), Env{})
			if tt.usage != "" {
				require.ErrorIs(t, err, ErrUsage)
				assert.Contains(t, err.Error(), tt.usage)
				assert.Empty(t, calls, "a usage error must not run the tool")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestDefaultRegistryHasPisSevenTools(t *testing.T) {
	var names []string
	for _, tool := range Default().List() {
		names = append(names, tool.Name)
		assert.NotEmpty(t, tool.Description, tool.Name)
	}
	assert.Equal(t, []string{"bash", "edit", "find", "grep", "ls", "read", "write"}, names)
}
