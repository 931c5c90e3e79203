package conformance

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/tools"
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
	require.NoError(t, json.Unmarshal(runNode(t, "specs.mjs", nil), &pi))

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
		})
	}
}
