//go:build linux

package sbxsim

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestHelpNamesEveryKnob: every SBXSIM_* variable the package reads is documented in
// --help, where users (and tests) look for them.
func TestHelpNamesEveryKnob(t *testing.T) {
	var help bytes.Buffer
	usage(&help)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`SBXSIM_[A-Z0-9_]+`)
	seen := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range re.FindAllString(string(b), -1) {
			seen[v] = true
		}
	}
	if len(seen) < 10 {
		t.Fatalf("found only %d SBXSIM_ variables in the sources: %v", len(seen), seen)
	}
	for v := range seen {
		if !strings.Contains(help.String(), v) {
			t.Errorf("--help does not name %s", v)
		}
	}
}
