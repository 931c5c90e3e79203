package rxsyntax

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCanonicalValue: Script and Script_Extensions share one value table (the generator
// writes it once); each property still answers for its own values, and a property
// without a value table says so.
func TestCanonicalValue(t *testing.T) {
	tests := []struct {
		prop, norm string
		canon      string
		hasValues  bool
	}{
		{"Script", "latn", "Latin", true},
		{"Script_Extensions", "latn", "Latin", true},
		{"Script", "adlam", "Adlam", true},
		{"Script_Extensions", "adlam", "Adlam", true},
		{"Script_Extensions", "zzzz", "Unknown", true},
		{"Script_Extensions", "notascript", "", true},
		{"General_Category", "lu", "Uppercase_Letter", true},
		{"General_Category", "latn", "", true},
		{"Alphabetic", "latn", "", false},
	}
	for _, tt := range tests {
		canon, has := rxCanonicalValue(tt.prop, tt.norm)
		assert.Equal(t, tt.canon, canon, "%s=%s", tt.prop, tt.norm)
		assert.Equal(t, tt.hasValues, has, "%s=%s has values", tt.prop, tt.norm)
	}
}

// TestScriptExtensionClasses: \p{scx=…} resolves through the shared value names to the
// script-extension sets, which differ from the script sets.
func TestScriptExtensionClasses(t *testing.T) {
	for _, pattern := range []string{`\p{scx=Latn}`, `\p{Script_Extensions=Greek}`, `\p{sc=Latin}`} {
		h, errText := Translate(pattern, false)
		assert.Empty(t, errText, pattern)
		assert.NotNil(t, h, pattern)
	}
	_, errText := Translate(`\p{scx=NotAScript}`, false)
	assert.Contains(t, errText, "Unicode property value not found")
	sc, _ := Translate(`\p{sc=Grek}`, false)
	scx, _ := Translate(`\p{scx=Grek}`, false)
	assert.NotEqual(t, sc.Class.Ranges, scx.Class.Ranges, "scx=Grek includes characters shared with other scripts")
}
