package fsops

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDecodeLossy checks the WHATWG rule: one U+FFFD per maximal invalid subsequence.
func TestDecodeLossy(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"a\xffb", "a\uFFFDb"},
		{"\xe2\x82", "\uFFFD"},                 // truncated 3-byte sequence: one replacement
		{"\xe2\x82c", "\uFFFDc"},               // the same, followed by text
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"}, // surrogate: ED then two stray continuations
		{"\xf0\x9f\x98", "\uFFFD"},
		{"\xc0\xaf", "\uFFFD\uFFFD"},
		{"\xf4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"},
		{"é\xe9", "é\uFFFD"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, decodeLossy([]byte(tt.in)), "%q", tt.in)
	}
}
