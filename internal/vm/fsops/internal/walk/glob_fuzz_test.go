package walk

import (
	"testing"
)

// FuzzGlobCompile checks that no glob or ignore line makes the compilers panic.
func FuzzGlobCompile(f *testing.F) {
	for _, s := range []string{"*.go", "src/**/x", "{a,b", "[!a-", `a\`, "**/", "!/a/", "a/**", "[]]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, glob string) {
		_, _ = CompileGlob(glob, false)
		_, _, _ = parseIgnoreLine(glob, true)
		_, _ = Override(glob)
	})
}
