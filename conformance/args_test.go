//go:build e2e

package conformance

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// argCases are raw tool arguments as a model or an MCP client may send them: strings
// for numbers and booleans, numbers and null for strings, nulls for optional members,
// single values for arrays, and the ones no coercion saves. pi's own argument handling
// (the tool's prepareArguments, then pi-ai's validateToolArguments) is the reference.
var argCases = []struct {
	tool string
	args string
}{
	{"read", `{"path":"a.txt","offset":"2","limit":null}`},
	{"read", `{"path":"a.txt","offset":" 3 ","limit":"1e1"}`},
	{"read", `{"path":5,"offset":"0x10","limit":"12n"}`},
	{"read", `{"path":null}`},
	{"read", `{"path":true,"offset":true,"limit":false}`},
	{"read", `{"path":"a","offset":"x","limit":"y"}`},
	{"read", `{"path":"a","offset":"Infinity"}`},
	{"read", `{"path":"a","offset":"1_000"}`},
	{"read", `{"path":"a","offset":"","limit":"   "}`},
	{"read", `{"path":"a","offset":"TRUE","limit":"False"}`},
	{"read", `{"limit":"x","offset":{},"path":[]}`},
	{"read", `{}`},
	{"read", `{"path":"a","extra":null}`},
	{"read", `[1]`},
	{"read", `"path"`},
	{"grep", `{"pattern":"a","ignoreCase":"true","literal":1,"context":" 3 ","limit":"1e3"}`},
	{"grep", `{"pattern":"a","ignoreCase":"yes","literal":2,"context":[],"limit":{}}`},
	{"grep", `{"pattern":"a","ignoreCase":"0","literal":"FALSE","glob":7,"path":false}`},
	{"grep", `{"pattern":"a","ignoreCase":null,"literal":null,"glob":null,"path":null,"context":null,"limit":null}`},
	{"grep", `{"pattern":["a"]}`},
	{"find", `{"pattern":true,"limit":"0x10","path":1.5}`},
	{"find", `{"pattern":"*","limit":"-0b1"}`},
	{"ls", `{"limit":"abc","path":7}`},
	{"ls", `{"limit":"2.5"}`},
	{"bash", `{"command":["ls"]}`},
	{"bash", `{"command":"ls","timeout":"30"}`},
	{"bash", `{"command":42,"timeout":"never"}`},
	{"write", `{"path":"f","content":12.5}`},
	{"write", `{"path":"f","content":{"a":1}}`},
	{"write", `{"content":"x"}`},
	{"edit", `{"path":"a","edits":[{"oldText":1,"newText":null}]}`},
	{"edit", `{"path":"a","edits":{"oldText":"x","newText":"y"}}`},
	{"edit", `{"path":"a","edits":"[{\"oldText\":\"x\",\"newText\":2}]"}`},
	{"edit", `{"path":"a","edits":"not json"}`},
	{"edit", `{"path":"a","edits":[{"oldText":"x"}]}`},
	{"edit", `{"path":"a","edits":[{}, {"oldText":[],"newText":{}}]}`},
	{"edit", `{"path":"a","oldText":"x","newText":"y"}`},
	{"edit", `{"path":"a","edits":[]}`},
	{"edit", `{"path":"a","edits":null}`},
}

// TestArgumentsAsPiTakesThem checks that Validate coerces what pi coerces into the same
// arguments, and refuses what pi refuses with pi's message: every violation in schema
// order, then the arguments received.
func TestArgumentsAsPiTakesThem(t *testing.T) {
	type call struct {
		Tool string          `json:"tool"`
		Args json.RawMessage `json:"args"`
	}
	calls := make([]call, len(argCases))
	for i, c := range argCases {
		calls[i] = call{c.tool, json.RawMessage(c.args)}
	}
	in, err := json.Marshal(calls)
	require.NoError(t, err)
	var pi []struct {
		OK    bool            `json:"ok"`
		Value json.RawMessage `json:"value"`
		Error string          `json:"error"`
	}
	require.NoError(t, json.Unmarshal(runNode(t, "validate.mjs", in), &pi))
	require.Len(t, pi, len(argCases))
	for i, c := range argCases {
		t.Run(c.tool+" "+c.args, func(t *testing.T) {
			tool, err := tools.Lookup(tools.Pi(), c.tool)
			require.NoError(t, err)
			got, err := tool.Validate([]byte(c.args))
			want := pi[i]
			if want.OK {
				require.NoError(t, err)
				assert.JSONEq(t, string(want.Value), string(got))
				return
			}
			require.ErrorIs(t, err, tools.ErrUsage)
			if strings.HasPrefix(want.Error, "Validation failed") {
				assert.Equal(t, want.Error, err.Error())
			} else {
				// Not pi-ai's check (prepareArguments threw, or the arguments are not an
				// object, which pi's JSON parser never hands on): only refusing counts.
				t.Logf("pi: %s\nours: %s", want.Error, err)
			}
		})
	}
}
