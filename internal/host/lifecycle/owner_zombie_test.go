//go:build linux

package lifecycle

import (
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestZombieOwnerIsGone: an owner that exited but was not reaped (its parent died first,
// and the container's init does not reap orphans) is gone, not running.
func TestZombieOwnerIsGone(t *testing.T) {
	cmd := exec.Command("true")
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	require.Eventually(t, func() bool { return zombie(pid) }, 10*time.Second, 5*time.Millisecond, "true exits and waits to be reaped")
	gone, why := Owner{Name: "pi-sbx-z", PID: pid, Boot: bootID(), Start: processStart(pid)}.Gone()
	assert.True(t, gone, why)
	assert.Equal(t, aliveNo, processAlive(pid))
}
