//go:build e2e && linux

package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tmuxPane is one tmux window on a private server, driven like a person at a terminal.
type tmuxPane struct {
	t      *testing.T
	socket string
}

func (p tmuxPane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", p.socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// keys types text (tmux key names such as Enter or C-c are sent as keys).
func (p tmuxPane) keys(keys ...string) { p.tmux(append([]string{"send-keys", "-t", "t"}, keys...)...) }

// expect waits until the screen shows want; the deadline only bounds a hang.
func (p tmuxPane) expect(want string) {
	p.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		screen := p.tmux("capture-pane", "-p", "-t", "t")
		if strings.Contains(screen, want) {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("screen never showed %q:\n%s", want, screen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestExecInteractiveTerminal runs `exec -it -- bash -i` in a real terminal (tmux):
// the command sees a terminal of the window's size, follows a resize (SIGWINCH is
// forwarded), gets ^C itself because our terminal is raw, and its exit status comes
// back; afterwards the terminal's modes are restored.
func TestExecInteractiveTerminal(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is required (scripts/setup.sh installs it)")
	}
	bin, err := exec.LookPath("pi-sbx-backend") // put on PATH by testscript.Main
	if err != nil {
		t.Fatal(err)
	}
	p := tmuxPane{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	script := `before=$(stty -g); env PS1='IN> ' ` + bin + ` exec -it -- bash --norc --noprofile -i; ` +
		`echo "EXIT=$?"; test "$(stty -g)" = "$before" && echo RESTORED; sleep 60`
	p.tmux("new-session", "-d", "-s", "t", "-x", "80", "-y", "24", "sh", "-c", script)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", p.socket, "kill-server").Run() })

	p.expect("IN>") // capture-pane drops trailing blanks
	p.keys("test -t 0 && echo TTY-$((40+2))", "Enter")
	p.expect("TTY-42")
	p.keys("stty size", "Enter")
	p.expect("24 80")

	p.tmux("resize-window", "-t", "t", "-x", "100", "-y", "30")
	p.keys("clear; stty size", "Enter")
	p.expect("30 100")

	// ^C once the command runs in the terminal's foreground group (it has printed), as a
	// person would: sent right after Enter it could reach bash before the job exists.
	p.keys("(echo SLEEP-$((1+2)); exec sleep 60)", "Enter")
	p.expect("SLEEP-3")
	p.keys("C-c")
	// The terminal flushes its input queue when ^C interrupts, and bash may drop what was
	// typed ahead while it recovers: a person types on at the next prompt, and so must
	// the test, or the next keys may be lost.
	p.expect("^C\nIN>")
	p.keys("echo ALIVE-$((1+1))", "Enter")
	p.expect("ALIVE-2")

	p.keys("exit 3", "Enter")
	p.expect("EXIT=3")
	p.expect("RESTORED")
}
