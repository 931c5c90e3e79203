//go:build e2e

package conformance

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// TestToolDefinitionsMatchPi checks that every front end advertises pi's own names,
// descriptions and parameter schemas: the model is tuned to them.
func TestToolDefinitionsMatchPi(t *testing.T) {
	type def struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
	}
	var pi map[string]def
	specs := runNode(t, "specs.mjs", nil)
	require.NoError(t, json.Unmarshal(specs, &pi))
	var piRaw map[string]struct {
		Parameters json.RawMessage `json:"parameters"`
	}
	require.NoError(t, json.Unmarshal(specs, &piRaw))

	list := tools.Pi()
	require.Len(t, list, len(pi))
	for name, want := range pi {
		t.Run(name, func(t *testing.T) {
			got, err := tools.Lookup(list, name)
			require.NoError(t, err, "tool %s not described", name)
			assert.Equal(t, want.Name, got.Name)
			assert.Equal(t, want.Description, got.Description)
			raw, err := json.Marshal(got.Schema)
			require.NoError(t, err)
			var schema map[string]any
			require.NoError(t, json.Unmarshal(raw, &schema))
			assert.Equal(t, want.Parameters, schema)
			// Property order too: tools/list shows it, and validation errors follow it.
			assert.Equal(t, propertyOrder(t, piRaw[name].Parameters), propertyOrder(t, raw))
		})
	}
}

// propertyOrder lists the names of a schema's properties, and of its items' properties
// when it has an array of objects, in the order the JSON text has them.
func propertyOrder(t *testing.T, schema []byte) []string {
	t.Helper()
	var s struct {
		Properties json.RawMessage `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(schema, &s))
	var names []string
	if len(s.Properties) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(s.Properties))
	_, err := dec.Token()
	require.NoError(t, err)
	for dec.More() {
		key, err := dec.Token()
		require.NoError(t, err)
		var prop json.RawMessage
		require.NoError(t, dec.Decode(&prop))
		names = append(names, key.(string))
		var sub struct {
			Items json.RawMessage `json:"items"`
		}
		require.NoError(t, json.Unmarshal(prop, &sub))
		if len(sub.Items) > 0 {
			for _, n := range propertyOrder(t, sub.Items) {
				names = append(names, key.(string)+"[]."+n)
			}
		}
	}
	return names
}
