package sbx

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain lets this test binary stand in for pi-sbx-backend as the watchdog's locker:
// run as `TESTBINARY watchdog-lock FD`, it does what that subcommand does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == WatchdogLockCommand {
		if err := RunWatchdogLock(os.Args[2:]); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestPollLock: the loop both platforms' Lock use tries until the lock is taken, stops
// at the first error, and gives up when ctx ends.
func TestPollLock(t *testing.T) {
	boom := errors.New("boom")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		answers []error // nil: taken; errBusy: held by another; other: the call failed
		tries   int
		err     error
	}{
		{"free", context.Background(), []error{nil}, 1, nil},
		{"held, then free", context.Background(), []error{errBusy, errBusy, nil}, 3, nil},
		{"fails", context.Background(), []error{errBusy, boom}, 2, boom},
		{"held until ctx ends", cancelled, []error{errBusy, nil}, 1, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tries := 0
			err := pollLock(tc.ctx, "box", func() (bool, error) {
				a := tc.answers[tries]
				tries++
				switch a {
				case nil:
					return true, nil
				case errBusy:
					return false, nil
				}
				return false, a
			})
			assert.Equal(t, tc.tries, tries)
			if tc.err == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tc.err)
			}
		})
	}
}

var errBusy = errors.New("held by another process")

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
