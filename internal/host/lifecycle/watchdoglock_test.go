package lifecycle

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// TestMain lets this test binary stand in for pi-sbx-backend as the watchdog's locker:
// run as `TESTBINARY watchdog-lock FD`, it does what that subcommand does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sbx.WatchdogLockCommand {
		if err := RunWatchdogLock(os.Args[2:]); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestWindowsLiveness checks the arithmetic of owner_windows.go, which only Windows
// runs.
func TestWindowsLiveness(t *testing.T) {
	assert.Equal(t, aliveYes, exitCodeAlive(259), "STILL_ACTIVE")
	assert.Equal(t, aliveNo, exitCodeAlive(0))
	assert.Equal(t, aliveNo, exitCodeAlive(1))
	assert.Equal(t, uint64(0x1_0000_0002), filetimeTicks(1, 2))
	assert.Equal(t, uint64(0xffff_ffff), filetimeTicks(0, 0xffff_ffff))
}

// TestRunWatchdogLock: the subcommand takes exactly one descriptor the shell opened.
func TestRunWatchdogLock(t *testing.T) {
	for _, args := range [][]string{nil, {"9", "10"}, {"x"}, {"2"}, {"-1"}} {
		assert.Error(t, RunWatchdogLock(args), "%q", args)
	}
	f, err := os.CreateTemp(t.TempDir(), "lock")
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, RunWatchdogLock([]string{itoa(int(f.Fd()))}))
}
