package walk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompileGlob(t *testing.T) {
	cases := []struct {
		glob, path string
		fold       bool
		want       bool
	}{
		{"*.go", "main.go", false, true},
		{"*.go", "src/main.go", false, false}, // '*' never crosses '/'
		{"*.go", ".hidden.go", false, true},   // no special dotfile rule
		{"src/*.go", "src/a.go", false, true},
		{"src/*.go", "src/x/a.go", false, false},
		{"src/**/*.go", "src/a.go", false, true}, // "/**/" matches zero directories
		{"src/**/*.go", "src/x/y/a.go", false, true},
		{"**/*.go", "a.go", false, true},
		{"**/*.go", "x/y/a.go", false, true},
		{"src/**", "src/a/b", false, true},
		{"src/**", "src", false, false}, // only what is below src
		{"a**b", "axyb", false, true},   // not a whole component: a plain '*'
		{"a**b", "ax/b", false, false},
		{"f?o", "foo", false, true},
		{"f?o", "f/o", false, false},
		{"[a-c]x", "bx", false, true},
		{"[!a-c]x", "bx", false, false},
		{"[^a-c]x", "dx", false, true},
		{"[]]x", "]x", false, true},
		{"*.{go,md}", "a.md", false, true},
		{"*.{go,md}", "a.txt", false, false},
		{`\*.go`, "*.go", false, true},
		{`\*.go`, "a.go", false, false},
		{"*.TS", "a.ts", false, false},
		{"*.ts", "a.TS", true, true},
		{"naïve*", "NAÏVE café", true, false}, // globset matches bytes: only ASCII folds (fd under pi)
		{"naïve*", "NAïVE café", true, true},
		{"[a-c]x", "BX", true, true},
		{"[!a-c]x", "BX", true, false},
		{"[!a-c]x", "dX", true, true},
		{"[X-b]", "y", true, true}, // X-Z, [ \ ] ^ _ `, a-b: x-z folded in
		{"[X-b]", "C", true, false},
		{"a+b(c)", "a+b(c)", false, true}, // regexp syntax is literal
	}
	for _, c := range cases {
		re, err := CompileGlob(c.glob, c.fold)
		require.NoError(t, err, c.glob)
		assert.Equal(t, c.want, re.MatchString(c.path), "%q on %q", c.glob, c.path)
	}
}

func TestCompileGlobErrors(t *testing.T) {
	cases := map[string]string{
		"a[":      "unclosed character class; missing ']'",
		"*.{go":   "unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)",
		"a}":      "unopened alternate group; missing '{' (maybe escape '}' with '[}]'?)",
		"{a,{b}}": "nested alternate groups are not allowed",
		`a\`:      `dangling '\'`,
	}
	for glob, want := range cases {
		_, err := CompileGlob(glob, false)
		require.Error(t, err, glob)
		assert.Equal(t, want, GlobErrorText(err), glob)
	}
}
