package lifecycle

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// holder starts a process that stands for another user of a sandbox; stop ends it.
func holder(t *testing.T) (pid int, stop func()) {
	t.Helper()
	cmd := exec.Command("sleep", "1000")
	require.NoError(t, cmd.Start())
	stop = func() { cmd.Process.Kill(); cmd.Wait() }
	t.Cleanup(stop)
	return cmd.Process.Pid, stop
}

func TestLeasesCountOnlyLiveHolders(t *testing.T) {
	leases := (&Owners{Dir: filepath.Join(t.TempDir(), "owners")}).Leases()
	now := time.Now()
	live, _ := holder(t)
	dead := deadPID(t)
	require.NoError(t, leases.Take("box", os.Getpid(), "serve", now))
	require.NoError(t, leases.Take("box", live, "shell", now.Add(time.Second)))
	require.NoError(t, leases.Take("box", dead, "serve", now.Add(2*time.Second)))
	// A lease whose pid now runs another process (its start time differs) proves nothing.
	require.NoError(t, os.WriteFile(filepath.Join(leases.Dir, "box", "1.lease"), []byte(`{"pid":1,"start":"not-a-start-time","since":"2026-01-01T00:00:00Z"}`), 0o600))
	require.NoError(t, leases.Take("other", live, "shell", now))

	others, err := leases.Others("box", os.Getpid())
	require.NoError(t, err)
	assert.Equal(t, []int{live}, pids(others), "only the live holder other than me")
	assert.Equal(t, "pid "+itoa(live)+" (shell)", Describe(others))
	assert.NoFileExists(t, filepath.Join(leases.Dir, "box", itoa(dead)+".lease"), "a dead holder's lease is removed")
	assert.NoFileExists(t, filepath.Join(leases.Dir, "box", "1.lease"), "a reused pid's lease is removed")

	all, err := leases.Others("box", 0)
	require.NoError(t, err)
	assert.Equal(t, []int{os.Getpid(), live}, pids(all), "oldest first")

	require.NoError(t, leases.Drop("box", live))
	require.NoError(t, leases.Drop("box", live), "dropping twice is fine")
	others, err = leases.Others("box", os.Getpid())
	require.NoError(t, err)
	assert.Empty(t, others)
	require.NoError(t, leases.Drop("box", os.Getpid()))
	assert.NoDirExists(t, filepath.Join(leases.Dir, "box"), "the last holder tidies up")

	none, err := (*Leases)(nil).Others("box", 0)
	assert.NoError(t, err)
	assert.Empty(t, none)
	assert.ErrorIs(t, leases.Take("-bad", 1, "", now), sbx.ErrBadName)
}

// TestCloseLeavesASharedSandboxToTheLastHolder: the session that created the sandbox
// does not remove it while another live process holds a lease; once that one is gone,
// the next teardown removes it.
func TestCloseLeavesASharedSandboxToTheLastHolder(t *testing.T) {
	owners := &Owners{Dir: filepath.Join(t.TempDir(), "owners")}
	f := &fakeRunner{answer: func(_ context.Context, c sbx.Cmd) (int, string, string) {
		if c.Args[0] == "ls" {
			return 0, `{"sandboxes":[]}`, ""
		}
		return 0, "", ""
	}}
	open := func() (*Session, *bytes.Buffer) {
		var progress bytes.Buffer
		s, err := NewSession(&sbx.Client{Bin: "sbx", Runner: f}, SessionOptions{Name: "pi-sbx-77-shared", Owners: owners, Workspace: "/ws", Progress: &progress})
		require.NoError(t, err)
		_, err = s.Ensure(context.Background())
		require.NoError(t, err)
		return s, &progress
	}
	other, stop := holder(t)
	require.NoError(t, owners.Leases().Take("pi-sbx-77-shared", other, "shell", time.Now()))

	s, progress := open()
	require.NoError(t, s.Close(context.Background()))
	assert.NotContains(t, f.argvs(), "rm --force pi-sbx-77-shared", "removed while pid %d uses it", other)
	assert.Contains(t, progress.String(), "still in use by pid "+itoa(other)+" (shell)")
	assert.NoFileExists(t, filepath.Join(owners.Leases().Dir, "pi-sbx-77-shared", itoa(os.Getpid())+".lease"), "its own lease ended")

	stop()
	s, _ = open()
	require.NoError(t, s.Close(context.Background()))
	assert.Contains(t, f.argvs(), "rm --force pi-sbx-77-shared", "the holder is gone: torn down")
}

// TestWatchdogWaitsForLeaseHolders runs the real watchdog script: its owner dies while
// another process holds a lease, and the sandbox is removed only once that one has gone.
func TestWatchdogWaitsForLeaseHolders(t *testing.T) {
	dir := t.TempDir()
	record := filepath.Join(dir, "calls")
	fakeSbx := filepath.Join(dir, "sbx")
	require.NoError(t, os.WriteFile(fakeSbx, []byte("#!/bin/sh\necho \"$@\" >> "+record+"\n"), 0o755))
	leases := &Leases{Dir: filepath.Join(dir, "leases")}
	owner, stopOwner := holder(t)
	other, stopOther := holder(t)
	require.NoError(t, leases.Take("box-1", owner, "serve", time.Now()))
	require.NoError(t, leases.Take("box-1", other, "shell", time.Now()))
	c := sbx.NewClient(fakeSbx, os.Getenv("PATH"), []string{"PATH=" + os.Getenv("PATH")}, sbx.ExecRunner{})
	w, err := StartWatchdog(c, owner, "box-1", TeardownRemove, 10*time.Millisecond, leases, "")
	require.NoError(t, err)
	defer w.Stop()

	stopOwner()
	time.Sleep(300 * time.Millisecond) // thirty polls with the owner dead
	assert.NoFileExists(t, record, "torn down while pid %d holds a lease", other)
	stopOther()
	require.Eventually(t, func() bool { b, _ := os.ReadFile(record); return string(b) == "rm --force box-1\n" },
		10*time.Second, 10*time.Millisecond)
}

func TestGCKeepsALeasedSandbox(t *testing.T) {
	owners := &Owners{Dir: filepath.Join(t.TempDir(), "owners")}
	old := time.Now().Add(-48 * time.Hour)
	require.NoError(t, owners.Record("pi-sbx-1-held", deadPID(t), false, "/ws", old))
	other, _ := holder(t)
	require.NoError(t, owners.Leases().Take("pi-sbx-1-held", other, "shell", time.Now()))
	f := &fakeRunner{answer: func(_ context.Context, c sbx.Cmd) (int, string, string) {
		if c.Args[0] == "ls" {
			return 0, `{"sandboxes":[{"name":"pi-sbx-1-held","status":"stopped"}]}`, ""
		}
		return 0, "", ""
	}}
	entries, err := GC(context.Background(), &sbx.Client{Bin: "sbx", Runner: f}, owners, GCOptions{MaxAge: 24 * time.Hour})
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, GCKept, entries[0].Verdict)
	assert.Equal(t, "in use by pid "+itoa(other)+" (shell)", entries[0].Reason)
	assert.NotContains(t, f.argvs(), "rm --force pi-sbx-1-held")
}

func pids(leases []Lease) []int {
	var out []int
	for _, l := range leases {
		out = append(out, l.PID)
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestGCPrunesOldLeaseLocks: a sweep removes the lease lock of a sandbox that is gone,
// unheld and old; a listed sandbox's, a held one's and a recent one's stay.
func TestGCPrunesOldLeaseLocks(t *testing.T) {
	owners := &Owners{Dir: filepath.Join(t.TempDir(), "owners")}
	leases := owners.Leases()
	old := time.Now().Add(-48 * time.Hour)
	lock := func(name string, at time.Time) string {
		unlock, err := leases.Lock(context.Background(), name)
		require.NoError(t, err)
		unlock()
		p := filepath.Join(leases.Dir, name+".lock")
		require.NoError(t, os.Chtimes(p, at, at))
		return p
	}
	gone, listed, held, recent := lock("pi-sbx-1-gone", old), lock("pi-sbx-2-listed", old), lock("pi-sbx-3-held", old), lock("pi-sbx-4-recent", time.Now())
	other, _ := holder(t)
	require.NoError(t, leases.Take("pi-sbx-3-held", other, "shell", time.Now()))
	f := &fakeRunner{answer: func(_ context.Context, c sbx.Cmd) (int, string, string) {
		return 0, `{"sandboxes":[{"name":"pi-sbx-2-listed","status":"running"}]}`, ""
	}}
	_, err := GC(context.Background(), &sbx.Client{Bin: "sbx", Runner: f}, owners, GCOptions{MaxAge: 24 * time.Hour})
	require.NoError(t, err)
	assert.NoFileExists(t, gone)
	for _, p := range []string{listed, held, recent} {
		assert.FileExists(t, p)
	}
}

// TestWatchdogDecidesUnderTheLeaseLock: with its owner gone and no other lease, the
// watchdog still waits while a session holds the lease lock (one joining, or tearing
// down), and removes the sandbox once the lock is free and nobody holds a lease; a
// lease taken under the lock in the meantime keeps the sandbox. The lock is taken by
// the locker (this test binary stands in for pi-sbx-backend, TestMain), never flock(1):
// the watchdog's PATH has only sleep, as on macOS, which has no flock(1). Without a
// working locker it decides without the lock (never pins the sandbox), which the other
// cases show this test would catch. sbx never gets the lock's descriptor.
func TestWatchdogDecidesUnderTheLeaseLock(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	for _, tc := range []struct {
		name, locker string
		locked       bool // the watchdog waits for the lock
	}{
		{"the locker takes the lock", self, true},
		{"no locker", "", false},
		{"a locker that is gone", filepath.Join(t.TempDir(), "removed"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			record := filepath.Join(dir, "calls")
			fakeSbx := filepath.Join(dir, "sbx")
			require.NoError(t, os.WriteFile(fakeSbx, []byte("#!/bin/sh\necho \"$@\" >> "+record+"\n[ -e /dev/fd/9 ] && echo 'got descriptor 9' >> "+record+"\nexit 0\n"), 0o755))
			bin := filepath.Join(dir, "bin")
			sleep, err := exec.LookPath("sleep")
			require.NoError(t, err)
			require.NoError(t, os.Mkdir(bin, 0o700))
			require.NoError(t, os.Symlink(sleep, filepath.Join(bin, "sleep")))
			leases := &Leases{Dir: filepath.Join(dir, "leases")}
			owner, stopOwner := holder(t)
			require.NoError(t, leases.Take("box-1", owner, "serve", time.Now()))
			c := sbx.NewClient(fakeSbx, bin, []string{"PATH=" + bin}, sbx.ExecRunner{})
			w, err := StartWatchdog(c, owner, "box-1", TeardownRemove, 10*time.Millisecond, leases, tc.locker)
			require.NoError(t, err)
			defer w.Stop()
			removed := func() bool { b, _ := os.ReadFile(record); return string(b) == "rm --force box-1\n" }

			unlock, err := leases.Lock(context.Background(), "box-1")
			require.NoError(t, err)
			stopOwner()
			if !tc.locked {
				require.Eventually(t, removed, 10*time.Second, 10*time.Millisecond, "decided without the lock")
				unlock()
				return
			}
			time.Sleep(300 * time.Millisecond) // thirty polls with the owner dead, the lock held
			assert.NoFileExists(t, record, "torn down while a session held the lease lock")
			joiner, stopJoiner := holder(t)
			require.NoError(t, leases.Take("box-1", joiner, "shell", time.Now()))
			unlock()
			time.Sleep(300 * time.Millisecond)
			assert.NoFileExists(t, record, "torn down under the lease of pid %d, taken under the lock", joiner)
			stopJoiner()
			require.Eventually(t, removed, 10*time.Second, 10*time.Millisecond)
			// The watchdog holds the lock until it exits: a joiner waits for the teardown.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			unlock, err = leases.Lock(ctx, "box-1")
			require.NoError(t, err, "the lock is free once the watchdog is done")
			unlock()
		})
	}
}
