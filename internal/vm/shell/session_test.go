package shell

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// underTerminal runs cmd with a fresh pseudo-terminal as its controlling terminal while
// its stdio stay what they are (pipes): the situation of a server started from a
// terminal, whose commands must still not reach that terminal.
func underTerminal(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	master, tty, err := pty.Open()
	require.NoError(t, err)
	t.Cleanup(func() { master.Close() })
	cmd.ExtraFiles = []*os.File{tty}                                             // fd 3 in the child
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3} // Ctty is a child fd
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Start()
	tty.Close()
	require.NoError(t, err)
	err = cmd.Wait()
	require.NoError(t, err, "%s", out.String())
	t.Log(out.String())
}

// bash starts a new session, as pi's does (Node's detached spawn): it has no controlling
// terminal even when the server has one, so `read </dev/tty` and credential prompts
// fail at once instead of waiting on a terminal nobody watches until the timeout.
// The test re-runs itself under a pseudo-terminal to have a controlling terminal.
func TestBashHasNoControllingTerminal(t *testing.T) {
	if os.Getenv("PI_SBX_TEST_UNDER_TTY") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestBashHasNoControllingTerminal$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "PI_SBX_TEST_UNDER_TTY=1")
		underTerminal(t, cmd)
		return
	}
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	require.NoError(t, err, "the test itself must have a controlling terminal")
	f.Close()

	timeout := 5.0
	tests := []struct{ name, command, want string }{
		{"read from /dev/tty fails at once", "read x </dev/tty; echo rc=$?", "/bin/bash: line 1: /dev/tty: No such device or address\nrc=1\n"},
		{"session leader", `test "$(cut -d' ' -f6 /proc/$$/stat)" = "$$" && echo leader`, "leader\n"},
		{"no controlling terminal", `cut -d' ' -f7 /proc/$$/stat`, "0\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Bash(context.Background(), t.TempDir(), BashArgs{Command: tt.command, Timeout: &timeout}, BashOptions{TempDir: t.TempDir()})
			require.NoError(t, err)
			assert.Equal(t, tt.want, text(t, r))
		})
	}
}
