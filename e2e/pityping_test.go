//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPiTypingDuringABangCommandIsPisOwn: a prompt typed while a `!` command runs goes to
// the model at once, in plain pi as with the package — pi's own editor decides that, not
// the `!` command's operations (pi 1.6.0's interactive mode submits any text that is not
// a `!` command; only a second `!` is refused while one runs). The command waits for a
// file the test makes only after the turn ended, so nothing here depends on timing.
func TestPiTypingDuringABangCommandIsPisOwn(t *testing.T) {
	for _, plain := range []bool{true, false} {
		name := "package"
		if plain {
			name = "plain pi"
		}
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			ready := "sandbox: pi-sbx-"
			if plain {
				ready = "scripted"
			}
			p := startTUI(t, w, w.ws, plain, ready)
			release := filepath.Join(w.ws, "release")
			// Outputs the command line itself does not show: waiting-5, released-2.
			p.send(`!echo waiting-$((2+3)); while [ ! -f ` + release + ` ]; do sleep 0.05; done; echo released-$((1+1))`)
			p.expect("waiting-5", time.Minute)
			p.send("typed while it runs")
			p.expect("turn 1 done", time.Minute)
			if strings.Contains(p.screen, "released-2") {
				t.Fatalf("the command ended before the turn:\n%s", p.screen)
			}
			if err := os.WriteFile(release, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			p.expect("released-2", time.Minute)
			p.tmux("send-keys", "-t", "t", "C-d")
			p.expect("PI-EXIT=0", 30*time.Second)
		})
	}
}
