//go:build e2e

package conformance

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/truncate"
)

// TestTruncateMatchesPi feeds the same generated inputs to pi's exported truncation
// helpers and to package truncate, and compares every field.
func TestTruncateMatchesPi(t *testing.T) {
	type call struct {
		Fn       string `json:"fn"`
		S        string `json:"s"`
		N        int    `json:"n"`
		MaxLines int    `json:"maxLines,omitempty"`
		MaxBytes int    `json:"maxBytes,omitempty"`
	}
	rng := rand.New(rand.NewSource(1))
	pieces := []string{"a", "é", "日本", "😀", "\n", "\n", "\r\n", " ", "line", "\t", strings.Repeat("x", 40)}
	gen := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		return b.String()
	}
	var calls []call
	for _, s := range []string{"", "\n", "a", "a\n", "a\nb", "a\nb\n", "\n\n\n", strings.Repeat("x", 60000), strings.Repeat("y\n", 3000), strings.Repeat("z", 200) + "\n" + strings.Repeat("w", 60000)} {
		calls = append(calls, call{Fn: "head", S: s}, call{Fn: "tail", S: s})
	}
	for i := 0; i < 300; i++ {
		s := gen(rng.Intn(200))
		ml, mb := 1+rng.Intn(12), 1+rng.Intn(120)
		calls = append(calls,
			call{Fn: "head", S: s, MaxLines: ml, MaxBytes: mb},
			call{Fn: "tail", S: s, MaxLines: ml, MaxBytes: mb},
			call{Fn: "line", S: s, N: 1 + rng.Intn(30)})
	}
	for _, n := range []int{0, 1, 1023, 1024, 1025, 1280, 3840, 52480, 51200, 1310720, 1048575, 1048576, 5 << 20, 123456789} {
		calls = append(calls, call{Fn: "size", N: n})
	}
	in, err := json.Marshal(calls)
	require.NoError(t, err)
	var want []json.RawMessage
	require.NoError(t, json.Unmarshal(runNode(t, "truncate.mjs", in), &want))
	require.Len(t, want, len(calls))

	for i, c := range calls {
		var got any
		o := truncate.Options{MaxLines: c.MaxLines, MaxBytes: c.MaxBytes}
		switch c.Fn {
		case "head":
			got = truncate.Head(c.S, o)
		case "tail":
			got = truncate.Tail(c.S, o)
		case "line":
			text, cut := truncate.Line(c.S, c.N)
			got = map[string]any{"text": text, "wasTruncated": cut}
		case "size":
			got = truncate.FormatSize(c.N)
		}
		gotJSON, err := json.Marshal(got)
		require.NoError(t, err)
		if !assert.JSONEq(t, string(want[i]), string(gotJSON), "call %d: %s %q lines=%d bytes=%d n=%d", i, c.Fn, c.S, c.MaxLines, c.MaxBytes, c.N) {
			return
		}
	}
}
