package fsops

import (
	"encoding/json"
	"os"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJSLowerEveryCodePoint compares jsLower of each code point alone with Node's
// toLowerCase (testdata/js-lower.json, checked against Node by conformance).
func TestJSLowerEveryCodePoint(t *testing.T) {
	raw, err := os.ReadFile("testdata/js-lower.json")
	require.NoError(t, err)
	var table [][2]any
	require.NoError(t, json.Unmarshal(raw, &table))
	node := make(map[rune]string, len(table))
	for _, e := range table {
		node[rune(e[0].(float64))] = e[1].(string)
	}
	bad := 0
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		want, ok := node[r]
		if !ok {
			want = string(r)
		}
		if got := jsLower(string(r)); got != want && bad < 10 {
			bad++
			t.Errorf("U+%04X: jsLower %q, Node %q", r, got, want)
		}
	}
}

func TestJSLowerFinalSigma(t *testing.T) {
	// Node 22's toLowerCase of each.
	for in, want := range map[string]string{
		"ΟΔΟΣ": "οδος", "Σ": "σ", "ΑΣ.txt": "ασ.txt", "ΑΣΑ": "ασα", "ΑΣ'Α": "ασ'α", "ΑΣ'": "ας'",
		"A\u0301Σ": "a\u0301ς", "1Σ": "1σ", "ΑΣ Β": "ας β", "ΣΑ": "σα", "ΑΣ-x": "ας-x",
		"ΑΣ_x": "ας_x", "ΑΣ:x": "ασ:x", "ΑΣ\u00adb": "ασ\u00adb",
	} {
		assert.Equal(t, want, jsLower(in), in)
	}
}
