package fsops

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestJSNumber(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"}, {1, "1"}, {-5, "-5"}, {2.5, "2.5"}, {1e21, "1e+21"}, {123456789012, "123456789012"},
		{1.5e21, "1.5e+21"}, {0.000001, "0.000001"}, {1e-7, "1e-7"}, {0.30000000000000004, "0.30000000000000004"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, jsNumber(tt.in), "%v", tt.in)
	}
}

func TestJSToFixed(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{1.25, "1.25"}, {1.125, "1.13"}, {1.005, "1.00"}, {1.5, "1.50"}, {2, "2.00"}, {0.995, "0.99"}, {1.3333333, "1.33"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, jsToFixed(tt.in, 2), "%v", tt.in)
	}
}

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
