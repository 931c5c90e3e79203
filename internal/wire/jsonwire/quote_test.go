package jsonwire

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// awkward holds every class of character a string encoder treats apart.
const awkward = "plain <b>&amp;</b> \"q\" \\ \b\f\n\r\t \x00\x01\x1f\x7f é 😀 \u2028\u2029 bad:\xff\xfe end"

// TestAppendStringMatchesEncodingJSON: both string encodings are encoding/json's, with
// and without HTML escaping, for every single byte and rune class.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	inputs := []string{awkward, "", "\u2027\u202a", string([]byte{0xed, 0xa0, 0x80}), "\xf4\x90\x80\x80", "a\xc3"}
	for b := 0; b < 256; b++ {
		inputs = append(inputs, string([]byte{byte(b)}), "x"+string([]byte{byte(b)})+"y")
	}
	for _, s := range inputs {
		html, err := json.Marshal(s)
		require.NoError(t, err)
		assert.Equal(t, string(html), string(AppendHTMLString(nil, s)), "%q", s)
		var plain strings.Builder
		enc := json.NewEncoder(&plain)
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(s))
		assert.Equal(t, strings.TrimSuffix(plain.String(), "\n"), string(AppendString(nil, s)), "%q", s)
	}
}
