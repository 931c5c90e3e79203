package lifecycle

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// deadPID returns the pid of a process that has exited (and been reaped).
func deadPID(t *testing.T) int {
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	return cmd.Process.Pid
}

func TestGCRemovesOnlyWhatItShould(t *testing.T) {
	owners := &Owners{Dir: t.TempDir()}
	now := time.Now()
	old, young := now.Add(-48*time.Hour), now.Add(-time.Hour)
	dead := deadPID(t)
	record := func(name string, pid int, pinned bool, at time.Time) {
		require.NoError(t, owners.Record(name, pid, pinned, "/ws", at))
	}
	record("pi-sbx-1-gone", dead, false, old)         // collected
	record("pi-sbx-2-young", dead, false, young)      // too young
	record("pi-sbx-3-alive", os.Getpid(), false, old) // owner alive
	record("pi-sbx-4-running", dead, false, old)      // running
	record("pi-sbx-5-pinned", dead, true, old)        // pinned by its record
	record("pi-sbx-6-current", dead, false, old)      // this session's
	record("pi-sbx-7-odd", dead, false, old)          // unknown state
	record("other-box", dead, false, old)             // not pi-sbx
	// pi-sbx-8-norecord: stopped, no record: kept
	ls := `{"sandboxes":[` +
		`{"name":"pi-sbx-1-gone","status":"stopped"},{"name":"pi-sbx-2-young","status":"stopped"},` +
		`{"name":"pi-sbx-3-alive","status":"stopped"},{"name":"pi-sbx-4-running","status":"running"},` +
		`{"name":"pi-sbx-5-pinned","status":"stopped"},{"name":"pi-sbx-6-current","status":"stopped"},` +
		`{"name":"pi-sbx-7-odd","status":"paused"},{"name":"other-box","status":"stopped"},` +
		`{"name":"pi-sbx-8-norecord","status":"stopped"}]}`
	for _, dry := range []bool{true, false} {
		r := &fakeRunner{answer: func(_ context.Context, c sbx.Cmd) (int, string, string) {
			if c.Args[0] == "ls" {
				return 0, ls, ""
			}
			return 0, "", ""
		}}
		c := &sbx.Client{Bin: "sbx", Runner: r}
		entries, err := GC(context.Background(), c, owners, GCOptions{MaxAge: 24 * time.Hour, DryRun: dry, Keep: []string{"pi-sbx-6-current"}, Now: now})
		require.NoError(t, err)
		verdicts := map[string]string{}
		for _, e := range entries {
			verdicts[e.Name] = e.Verdict + ": " + e.Reason
		}
		want := GCRemoved
		if dry {
			want = GCWouldRemove
		}
		assert.True(t, strings.HasPrefix(verdicts["pi-sbx-1-gone"], want), verdicts["pi-sbx-1-gone"])
		for name, why := range map[string]string{
			"pi-sbx-2-young": "old", "pi-sbx-3-alive": "is running", "pi-sbx-4-running": "running",
			"pi-sbx-5-pinned": "pinned", "pi-sbx-6-current": "this session", "pi-sbx-7-odd": "unknown state",
			"other-box": "not a pi-sbx", "pi-sbx-8-norecord": "no owner record",
		} {
			assert.Contains(t, verdicts[name], GCKept+": ", name)
			assert.Contains(t, verdicts[name], why, name)
		}
		var rms []string
		for _, a := range r.argvs() {
			if strings.HasPrefix(a, "rm") {
				rms = append(rms, a)
			}
		}
		if dry {
			assert.Empty(t, rms, "a dry run removes nothing")
			_, err := owners.Read("pi-sbx-1-gone")
			assert.NoError(t, err)
		} else {
			assert.Equal(t, []string{"rm --force pi-sbx-1-gone"}, rms)
			_, err := owners.Read("pi-sbx-1-gone")
			assert.ErrorIs(t, err, os.ErrNotExist, "the record goes with the sandbox")
		}
		assert.Contains(t, FormatGC(entries), "collected")
	}
}

func TestGCForgetsRecordsOfVanishedSandboxes(t *testing.T) {
	owners := &Owners{Dir: t.TempDir()}
	now := time.Now()
	require.NoError(t, owners.Record("pi-sbx-gone-old", deadPID(t), false, "/ws", now.Add(-48*time.Hour)))
	require.NoError(t, owners.Record("pi-sbx-gone-young", deadPID(t), false, "/ws", now.Add(-time.Hour)))
	require.NoError(t, owners.Record("pi-sbx-alive-old", os.Getpid(), false, "/ws", now.Add(-48*time.Hour)))
	r := &fakeRunner{answer: func(context.Context, sbx.Cmd) (int, string, string) { return 0, `{"sandboxes":[]}`, "" }}
	_, err := GC(context.Background(), &sbx.Client{Bin: "sbx", Runner: r}, owners, GCOptions{MaxAge: 24 * time.Hour, Now: now})
	require.NoError(t, err)
	_, err = owners.Read("pi-sbx-gone-old")
	assert.ErrorIs(t, err, os.ErrNotExist)
	for _, kept := range []string{"pi-sbx-gone-young", "pi-sbx-alive-old"} {
		_, err = owners.Read(kept)
		assert.NoError(t, err, kept)
	}
}

func TestOwnerGone(t *testing.T) {
	self := Owner{Name: "pi-sbx-x", PID: os.Getpid(), Boot: bootID(), Start: processStart(os.Getpid())}
	gone, why := self.Gone()
	assert.False(t, gone, why)
	dead := self
	dead.PID = deadPID(t)
	gone, why = dead.Gone()
	assert.True(t, gone, why)
	reused := self
	reused.Start = "1" // our pid, but "started" at another time: a reused pid
	gone, why = reused.Gone()
	assert.True(t, gone, why)
	if bootID() != "" {
		rebooted := self
		rebooted.Boot = "another-boot"
		gone, why = rebooted.Gone()
		assert.True(t, gone, why)
	}
}

func TestNewOwners(t *testing.T) {
	o, err := NewOwners("/s")
	require.NoError(t, err)
	assert.Equal(t, "/s/pi-sbx-backend/owners", o.Dir)
	_, err = NewOwners("")
	assert.ErrorContains(t, err, "HOME (or XDG_STATE_HOME)")
	_, err = (&Owners{Dir: t.TempDir()}).Read("../etc")
	assert.ErrorIs(t, err, sbx.ErrBadName)
}

// With Cloud, a sweep lists the cloud side too and removes a collectable cloud sandbox
// with --cloud; an owner record is forgotten only when neither side lists its sandbox.
func TestGCSweepsTheCloudToo(t *testing.T) {
	owners := &Owners{Dir: t.TempDir()}
	now := time.Now()
	old := now.Add(-48 * time.Hour)
	require.NoError(t, owners.Record("pi-sbx-1-cloud", deadPID(t), false, "/ws", old))
	require.NoError(t, owners.Record("pi-sbx-2-cloudrun", deadPID(t), false, "/ws", old))
	r := &fakeRunner{version: "0.55.0", answer: func(_ context.Context, c sbx.Cmd) (int, string, string) {
		argv := strings.Join(c.Args, " ")
		switch {
		case strings.Contains(argv, "--cloud") && strings.Contains(argv, " ls"):
			return 0, `{"sandboxes":[{"name":"pi-sbx-1-cloud","status":"stopped"},{"name":"pi-sbx-2-cloudrun","status":"running"}]}`, ""
		case strings.Contains(argv, " ls"):
			return 0, `{"sandboxes":[]}`, ""
		}
		return 0, "", ""
	}}
	c := &sbx.Client{Bin: "sbx", Runner: r}

	_, err := GC(context.Background(), c, owners, GCOptions{MaxAge: 24 * time.Hour, Now: now, DryRun: true})
	require.NoError(t, err)
	assert.NotContains(t, strings.Join(r.argvs(), "\n"), "--cloud", "without Cloud the cloud is never asked")

	entries, err := GC(context.Background(), c, owners, GCOptions{MaxAge: 24 * time.Hour, Now: now, Cloud: true})
	require.NoError(t, err)
	require.Len(t, entries, 2)
	assert.Equal(t, GCRemoved, entries[0].Verdict, entries)
	assert.Equal(t, GCKept, entries[1].Verdict)
	assert.Contains(t, strings.Join(r.argvs(), "\n"), "--no-input --cloud rm --force pi-sbx-1-cloud")
	_, err = owners.Read("pi-sbx-2-cloudrun")
	assert.NoError(t, err, "a record of a sandbox the cloud lists is kept")
}
