//go:build e2e

package conformance

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJSLowerTableIsNodes checks that internal/vm/fsops/testdata/js-lower.json, against which fsops
// tests its jsLower code point by code point, is what pi's Node says: regenerate it with
// `node conformance/jslower.mjs > internal/vm/fsops/testdata/js-lower.json` when Node changes.
func TestJSLowerTableIsNodes(t *testing.T) {
	want, err := os.ReadFile(filepath.Join(repoRoot(), "internal/vm/fsops/testdata/js-lower.json"))
	require.NoError(t, err)
	assert.True(t, string(want) == string(runNode(t, "jslower.mjs", nil)), "internal/vm/fsops/testdata/js-lower.json is stale")
}
