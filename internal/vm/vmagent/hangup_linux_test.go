package vmagent

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/shell"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestTerminalEndsWithItsAgentUnderNohup: an agent started with SIGHUP ignored (under
// nohup, as a CI job may start everything) still gives a terminal session's shell
// SIGHUP's default action, so the shell ends when the agent dies and its terminal hangs
// up. Before, the shell inherited the ignore and outlived the agent.
func TestTerminalEndsWithItsAgentUnderNohup(t *testing.T) {
	if pidFile := os.Getenv("PI_SBX_HANGUP_HELPER"); pidFile != "" {
		require.NoError(t, SealInherited())
		p, err := shell.StartPty(context.Background(), []string{"/bin/sh", "-c", "echo $$ > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + "; sleep 600"}, shell.PtyOptions{Cols: 80, Rows: 24})
		require.NoError(t, err)
		defer p.Close()
		time.Sleep(time.Hour) // until the test kills this agent
		return
	}
	pidFile := filepath.Join(t.TempDir(), "shell.pid")
	exe, err := os.Executable()
	require.NoError(t, err)
	agent := exec.Command("/bin/sh", "-c", `trap "" HUP; exec "$0" -test.run '^TestTerminalEndsWithItsAgentUnderNohup$'`, exe)
	agent.Env = append(os.Environ(), "PI_SBX_HANGUP_HELPER="+pidFile)
	require.NoError(t, agent.Start())
	defer agent.Process.Kill()
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	}, time.Minute, 10*time.Millisecond, "the session's shell starts")
	pidfd, err := unix.PidfdOpen(pid, 0)
	require.NoError(t, err)
	defer unix.Close(pidfd)
	defer unix.PidfdSendSignal(pidfd, syscall.SIGKILL, nil, 0) // never left behind

	require.NoError(t, agent.Process.Kill())
	_ = agent.Wait()
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, int((30 * time.Second).Milliseconds()))
	require.NoError(t, err)
	require.Equal(t, 1, n, "the session's shell (pid %d) ended with its agent", pid)
}
