package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets testscript scripts run this binary as `pi-sbx-backend`.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"pi-sbx-backend": main,
		// the review commands over work a script leaves in refs (review_fixture_test.go)
		"pi-sbx-review-fixture": fixtureMain,
	})
}

// TestScripts runs the CLI scenarios in testdata/script/*.txtar.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("TMPDIR", os.TempDir())
			return nil
		},
	})
}
