//go:build e2e

package e2e

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPiKilledDuringABangCommand: pi killed with SIGKILL while a `!sleep 100000` runs in
// the sandbox leaves neither the sandbox nor serve behind: serve sees its stdin end with
// a call running and tears down at once. The time it took is logged (the bound only
// stops a hang; it is no speed claim).
func TestPiKilledDuringABangCommand(t *testing.T) {
	w := newWorld(t)
	gitInit(t, w.ws)
	p := startPiTUI(t, w, w.ws)
	require.Len(t, w.sandboxes(), 1)
	p.send(`!echo SLEEPING-$((40+2)); sleep 100000`)
	p.expect("SLEEPING-42", 30*time.Second)

	pane := strings.TrimSpace(p.tmux("display-message", "-p", "-t", "t", "#{pane_pid}"))
	children, err := os.ReadFile("/proc/" + pane + "/task/" + pane + "/children")
	require.NoError(t, err)
	require.NotEmpty(t, strings.Fields(string(children)), "pi runs under the pane's shell")
	pid, err := strconv.Atoi(strings.Fields(string(children))[0])
	require.NoError(t, err)
	killed := time.Now()
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	p.expect("PI-EXIT=137", 30*time.Second)
	require.Eventually(t, func() bool { return len(w.sandboxes()) == 0 && len(servePids()) == 0 }, 20*time.Second, 20*time.Millisecond,
		"sandbox %v and serve %v are gone", w.sandboxes(), servePids())
	t.Logf("sandbox and serve gone %.2f s after the kill", time.Since(killed).Seconds())
}
