package sbx

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The pi package starts serve with the environment serve gives its own children, so that
// pi's API keys never reach serve unless asked for: its BASICS (extension/src/serveenv.ts)
// must be hostBasics. The test reads the TypeScript source instead of both sides reading
// a shared file because each list is plain code where it is used: a generated JSON would
// have to be shipped in the npm package and embedded here from outside this package.
func TestExtensionBasicsAreHostBasics(t *testing.T) {
	src, err := os.ReadFile("../../../extension/src/serveenv.ts")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^const BASICS = \[([^\]]*)\];$`).FindSubmatch(src)
	require.NotNil(t, m, "extension/src/serveenv.ts declares `const BASICS = [...];`")
	var basics []string
	for _, item := range strings.Split(string(m[1]), ",") {
		name, err := strconv.Unquote(strings.TrimSpace(item))
		require.NoError(t, err, "BASICS item %q", item)
		basics = append(basics, name)
	}
	require.Equal(t, hostBasics, basics, "the extension's BASICS and sbx's hostBasics")
}
