package js

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Expected texts are Node 22's util.inspect (and ERR_INVALID_ARG_VALUE) of the inputs.
func TestInvalidArgValue(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a\x00b", `'a\x00b'`},
		{"it's \x00 \"q\" \t \x01 \x1f \x7f \u0085 é 😀 \\", "`it's \\x00 \"q\" \\t \\x01 \\x1F \\x7F \\x85 é 😀 \\\\`"},
		{"it's\x00", `"it's\x00"`},
		{"a\u2028\u00a0\u200b\ufeff\x00", "'a\u2028\u00a0\u200b\ufeff\\x00'"},
		{"a\nb\x00" + strings.Repeat("c", 80), "'a\\n' +\n  'b\\x00" + strings.Repeat("c", 80) + "'"},
		{strings.Repeat("a", 200) + "\x00", "'" + strings.Repeat("a", 127) + "..."},
	}
	for _, tt := range tests {
		assert.Equal(t, "The argument 'path' must be fine. Received "+tt.want, InvalidArgValue("path", tt.in, "must be fine"))
	}
	assert.Equal(t, "The property 'a.b' is invalid. Received ''", InvalidArgValue("a.b", "", "is invalid"))
}
