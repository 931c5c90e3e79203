//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// piTUI is pi's interactive TUI with the scripted model (and, unless plain, the
// extension), running in tmux against serve on sbxsim.
type piTUI struct {
	t      testing.TB
	socket string
	screen string // the last capture
}

// startPiTUI starts pi with the extension in dir (inside w's workspace) in a 100×40 tmux
// window and waits for the status line to name the pre-warmed sandbox.
func startPiTUI(t *testing.T, w *world, dir string, extraEnv ...string) *piTUI {
	t.Helper()
	return startPiTUIWith(t, w, dir, "sandbox: pi-sbx-", extraEnv...)
}

// startPiTUIWith is startPiTUI waiting for ready to show instead.
func startPiTUIWith(t testing.TB, w *world, dir, ready string, extraEnv ...string) *piTUI {
	t.Helper()
	return startTUI(t, w, dir, false, ready, extraEnv...)
}

// startTUI starts pi in tmux, with the extension unless plain, and waits for ready.
func startTUI(t testing.TB, w *world, dir string, plain bool, ready string, extraEnv ...string) *piTUI {
	t.Helper()
	return startTUIAt(t, w, dir, t.TempDir(), "", plain, ready, extraEnv...)
}

// startTUIAt is startTUI with pi's HOME (where its sessions are kept) and extra
// arguments for pi (e.g. -c to continue the last session).
func startTUIAt(t testing.TB, w *world, dir, home, piArgs string, plain bool, ready string, extraEnv ...string) *piTUI {
	t.Helper()
	root, node := piEnv(t)
	ext := filepath.Join(root, "extension")
	p := &piTUI{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	var env []string
	for _, kv := range w.env(append([]string{"HOME=" + home, "PI_SBX_BACKEND=" + backendBin,
		"PATH=" + filepath.Dir(node) + ":" + os.Getenv("PATH"), "TERM=xterm-256color"}, extraEnv...)...) {
		env = append(env, "'"+kv+"'")
	}
	load := " -e " + ext
	if plain {
		load = ""
	}
	script := "cd " + dir + " && env -i " + strings.Join(env, " ") + " " + filepath.Join(ext, "node_modules/.bin/pi") +
		" --provider faux --model scripted" + load + " -e " + filepath.Join(ext, "test/faux-provider.ts") + " " + piArgs +
		`; echo "PI-EXIT=$?"; sleep 60`
	p.tmux("new-session", "-d", "-s", "t", "-x", "100", "-y", "40", "sh", "-c", script)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", p.socket, "kill-server").Run() })
	p.expect(ready, time.Minute)
	return p
}

func (p *piTUI) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", p.socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
	require.NoError(p.t, err, "tmux %v: %s", args, out)
	return string(out)
}

// send types keys into pi and presses Enter.
func (p *piTUI) send(keys string) { p.tmux("send-keys", "-t", "t", keys, "Enter") }

// expect waits until the screen shows want, for at most within.
func (p *piTUI) expect(want string, within time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(within)
	for {
		p.screen = p.tmux("capture-pane", "-p", "-t", "t")
		if strings.Contains(p.screen, want) {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("screen never showed %q within %s:\n%s", want, within, p.screen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// expectDone waits until no `!` command shows pi's "Running..." loader, for at most
// within: a command's output shows before its call returns (in review mode, after its
// checkpoint), and pi refuses a second `!` command while one runs, as a person would
// find who typed the next one before the first finished.
func (p *piTUI) expectDone(within time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(within)
	for {
		p.screen = p.tmux("capture-pane", "-p", "-t", "t")
		if !strings.Contains(p.screen, "Running...") {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("a ! command still ran after %s:\n%s", within, p.screen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPiBangNeverWaitsForInput: a `!` command in pi's TUI runs on a terminal nobody types
// into, so nothing waits for keys: `git log` of 60 commits prints all of it (no pager) and
// `read` gets end-of-file, as under pi's own `!`, while stdout is still a terminal; and a
// resize of pi's window reaches the running command. The
// 15 s bound is far beyond the command's own time and far below a hang (which is until
// Esc); the test's timings never decide anything else.
func TestPiBangNeverWaitsForInput(t *testing.T) {
	w := newWorld(t)
	gitInit(t, w.ws)
	for i := 1; i <= 60; i++ {
		out, err := exec.Command("git", "-C", w.ws, "-c", "user.name=t", "-c", "user.email=t@t",
			"commit", "-q", "--allow-empty", "-m", fmt.Sprintf("commit-%02d", i)).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	p := startPiTUI(t, w, w.ws)

	p.send(`!git log --format=%s; echo LOG-DONE-$((40+2))`)
	p.expect("LOG-DONE-42", 15*time.Second)
	p.expectDone(15 * time.Second)
	require.Contains(t, p.screen, "commit-01", "the whole log, down to the first commit")
	t.Logf("after !git log:\n%s", p.screen)

	p.send(`!test -t 1 && echo out-tty; read x; echo "got=$x rc=$?"`)
	p.expect("got= rc=1", 15*time.Second)
	require.Contains(t, p.screen, "out-tty", "stdout is still a terminal")
	p.expectDone(15 * time.Second)

	// A resize of pi's window reaches the running command as SIGWINCH, with the new size.
	p.send(`!trap 'echo "size=$(stty size </dev/tty)"; exit 0' WINCH; echo waiting-for-winch; while :; do sleep 0.05; done`)
	p.expect("waiting-for-winch", 15*time.Second)
	p.tmux("resize-window", "-t", "t", "-x", "120", "-y", "45")
	p.expect("size=45 120", 15*time.Second)

	p.tmux("send-keys", "-t", "t", "C-d")
	p.expect("PI-EXIT=0", 30*time.Second)
}
