//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShellRunsInTheSandbox: `shell -- CMD` runs CMD in a new session sandbox, in the
// workspace at its host path, with only PI_* variables forwarded; its exit status comes
// back, and the sandbox is removed afterwards. Without a command, the shell reads stdin.
func TestShellRunsInTheSandbox(t *testing.T) {
	w := newWorld(t)
	marker := filepath.Join(t.TempDir(), "host-marker")
	cmd := exec.Command(backendBin, "shell", "--", "sh", "-c",
		`echo "host=$(hostname) pwd=$(pwd) mark=$PI_E2E_MARK secret=$HOST_SECRET docker=$DOCKER_HOST"; touch `+marker+`; echo inside > made-by-shell; exit 7`)
	cmd.Dir, cmd.Env = w.ws, w.env()
	out, err := cmd.Output()
	assert.Equal(t, 7, exitCode(err), stderrOf(err))
	assert.Regexp(t, `^host=pi-sbx-\d+-[a-z0-9]+ pwd=`+w.ws+` mark=forwarded secret= docker=\n$`, string(out))
	assert.NoFileExists(t, marker, "the command ran in the sandbox, not on the host")
	got, err := os.ReadFile(filepath.Join(w.ws, "made-by-shell"))
	require.NoError(t, err, "the workspace is the host's")
	assert.Equal(t, "inside\n", string(got))
	assert.Empty(t, w.sandboxes(), "the session's sandbox is removed when the shell ends")

	piped := exec.Command(backendBin, "shell")
	piped.Dir, piped.Env = w.ws, w.env()
	piped.Stdin = strings.NewReader("echo from-stdin-$((40+2)); exit 3\n")
	out, err = piped.Output()
	assert.Equal(t, 3, exitCode(err), stderrOf(err))
	assert.Equal(t, "from-stdin-42\n", string(out))
}

// TestShellInATerminal drives `shell` from a real terminal (tmux): the sandbox's shell
// sees a terminal of the window's size, follows a resize, and its exit status returns.
func TestShellInATerminal(t *testing.T) {
	w := newWorld(t)
	socket := filepath.Join(t.TempDir(), "tmux.sock")
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-S", socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
		require.NoError(t, err, "tmux %v: %s", args, out)
		return string(out)
	}
	expect := func(want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second) // bounds a hang only
		for {
			screen := tmux("capture-pane", "-p", "-t", "t")
			if strings.Contains(screen, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("screen never showed %q:\n%s", want, screen)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	var env []string
	for _, kv := range w.env() {
		env = append(env, "'"+kv+"'")
	}
	script := "cd " + w.ws + " && env -i " + strings.Join(env, " ") + " " + backendBin +
		` shell -- env PS1='IN> ' bash --norc --noprofile -i; echo "EXIT=$?"; sleep 60`
	tmux("new-session", "-d", "-s", "t", "-x", "80", "-y", "24", "sh", "-c", script)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", socket, "kill-server").Run() })

	expect("IN>")
	tmux("send-keys", "-t", "t", "test -t 0 && echo TTY-$((40+2)); hostname", "Enter")
	expect("TTY-42")
	expect("pi-sbx-")
	tmux("send-keys", "-t", "t", "stty size", "Enter")
	expect("24 80")
	tmux("resize-window", "-t", "t", "-x", "100", "-y", "30")
	// The new size travels as SIGWINCH to sbx, which resizes the VM's terminal: keys
	// typed meanwhile may run first, so ask again until it shows (bounded by expect's
	// deadline on the last try).
	for try := 0; ; try++ {
		tmux("send-keys", "-t", "t", "clear; stty size", "Enter")
		if try == 20 {
			expect("30 100")
			break
		}
		time.Sleep(250 * time.Millisecond)
		if strings.Contains(tmux("capture-pane", "-p", "-t", "t"), "30 100") {
			break
		}
	}
	tmux("send-keys", "-t", "t", "exit 4", "Enter")
	expect("EXIT=4")
}
