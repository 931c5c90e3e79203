package tools

import (
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func echoTool() *Tool {
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
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name, args string
		usage      string // non-empty: want an ErrUsage containing this
		want       string
	}{
		{name: "ok", args: `{"text":"hi"}`, want: `{"text":"hi"}`},
		{name: "extra properties are allowed", args: `{"text":"hi","x":1}`, want: `{"text":"hi","x":1}`},
		{name: "prepare runs before validation", args: `{"legacy":"old"}`, want: `{"text":"old"}`},
		{name: "big numbers keep their digits", args: `{"text":"a","times":12345678901234567890}`, want: `{"text":"a","times":12345678901234567890}`},
		{name: "malformed", args: `{"text":`, usage: "not valid JSON"},
		{name: "trailing data", args: `{"text":"a"} {}`, usage: "trailing data"},
		{name: "not an object", args: `"text"`, usage: "  - root: expected object, got string\n"},
		{name: "missing required", args: `{}`, usage: "text"},
		{name: "wrong type", args: `{"text":"a","times":"x"}`, usage: "Validation failed for tool \"echo\":\n  - times: expected number, got string\n\nReceived arguments:\n{\n  \"text\": \"a\",\n  \"times\": \"x\"\n}"},
		{name: "every violation, in schema order", args: `{"times":{},"text":[]}`, usage: "  - text: expected string, got array\n  - times: expected number, got object\n"},
		{name: "coerced as pi does", args: `{"text":5,"times":" 0x10 "}`, want: `{"text":"5","times":16}`},
		{name: "optional null dropped, required null a string", args: `{"text":null,"times":null}`, want: `{"text":"null"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := echoTool().Validate([]byte(tt.args))
			if tt.usage != "" {
				require.ErrorIs(t, err, ErrUsage)
				assert.Contains(t, err.Error(), tt.usage)
				assert.NotContains(t, err.Error(), "validating root")
				return
			}
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(got))
		})
	}
}

func TestLookup(t *testing.T) {
	list := Pi()
	got, err := Lookup(list, "edit")
	require.NoError(t, err)
	assert.Equal(t, "edit", got.Name)
	_, err = Lookup(list, "nope")
	require.ErrorIs(t, err, ErrUsage)
	assert.Contains(t, err.Error(), `unknown tool "nope" (have bash, edit, find, grep, ls, read, write)`)
}

func TestPiHasSevenResolvableTools(t *testing.T) {
	for _, tool := range Pi() {
		assert.NotEmpty(t, tool.Description, tool.Name)
		require.NoError(t, tool.Resolve(), tool.Name)
	}
	assert.Equal(t, []string{"bash", "edit", "find", "grep", "ls", "read", "write"}, Names(Pi()))
}

func TestBrokenSchemaIsAUsageError(t *testing.T) {
	tool := &Tool{Name: "x"}
	_, err := tool.Validate([]byte(`{}`))
	require.ErrorIs(t, err, ErrUsage)
	assert.Contains(t, err.Error(), "has no schema")
}

func TestPrepareEditArgs(t *testing.T) {
	one := map[string]any{"oldText": "a", "newText": "b"}
	tests := []struct {
		name string
		in   map[string]any
		want map[string]any
	}{
		{"array unchanged", map[string]any{"path": "p", "edits": []any{one}}, map[string]any{"path": "p", "edits": []any{one}}},
		{"JSON string", map[string]any{"path": "p", "edits": `[{"oldText":"a","newText":"b"}]`}, map[string]any{"path": "p", "edits": []any{one}}},
		{"JSON string of one object", map[string]any{"path": "p", "edits": `{"oldText":"a","newText":"b"}`}, map[string]any{"path": "p", "edits": []any{one}}},
		{"bad JSON string kept", map[string]any{"path": "p", "edits": `[{`}, map[string]any{"path": "p", "edits": `[{`}},
		{"single object", map[string]any{"path": "p", "edits": one}, map[string]any{"path": "p", "edits": []any{one}}},
		{"legacy", map[string]any{"path": "p", "oldText": "a", "newText": "b"}, map[string]any{"path": "p", "edits": []any{one}}},
		{"legacy appended", map[string]any{"path": "p", "oldText": "a", "newText": "b", "edits": []any{one}},
			map[string]any{"path": "p", "edits": []any{one, one}}},
		{"half legacy left alone", map[string]any{"path": "p", "oldText": "a"}, map[string]any{"path": "p", "oldText": "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PrepareEditArgs(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestDockerToolsResolve(t *testing.T) {
	names := Names(Docker())
	require.Len(t, names, 19)
	for _, tool := range Docker() {
		require.NoError(t, tool.Resolve(), tool.Name)
		assert.NotEmpty(t, tool.Description, tool.Name)
	}
	run, err := Lookup(Docker(), "docker_run")
	require.NoError(t, err)
	_, err = run.Validate([]byte(`{"image":"busybox","command":["sh","-c","x"],"env":"A=1","ports":["8080"]}`))
	require.NoError(t, err)
	_, err = run.Validate([]byte(`{"image":"busybox","network":"macvlan"}`))
	assert.ErrorIs(t, err, ErrUsage)
	_, err = run.Validate([]byte(`{"image":"busybox","command":{}}`))
	assert.ErrorIs(t, err, ErrUsage)
	got, err := run.Validate([]byte(`{"image":"busybox","command":3}`))
	require.NoError(t, err) // pi's coercion: the union's first branch takes "3"
	assert.JSONEq(t, `{"image":"busybox","command":"3"}`, string(got))
}
