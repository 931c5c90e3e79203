package terminal

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/shell"
)

func newManager(t *testing.T, l Limits) *Manager {
	t.Helper()
	m, err := NewManager(t.TempDir(), l)
	require.NoError(t, err)
	t.Cleanup(m.Close)
	return m
}

// sh runs cmd as the terminal tools do, with bash.
func sh(cmd string) Spec { return Spec{Cmd: cmd, Argv: []string{shell.Path(), "-c", cmd}} }

// wait waits for s to finish (at most 20 s).
func wait(t *testing.T, s *Session) State {
	t.Helper()
	r, err := s.Wait(context.Background(), WaitSpec{Deadline: time.Now().Add(20 * time.Second)})
	require.NoError(t, err)
	require.True(t, r.Exited, "the command finished")
	return r.State
}

func TestSessionCap(t *testing.T) {
	m := newManager(t, Limits{MaxSessions: 3})
	var running []*Session
	for range 2 {
		s, err := m.Start(sh("sleep 600"))
		require.NoError(t, err)
		running = append(running, s)
	}
	done, err := m.Start(sh("echo done"))
	require.NoError(t, err)
	wait(t, done)

	// Full: the finished session makes room, the oldest finished first.
	s, err := m.Start(sh("sleep 600"))
	require.NoError(t, err, "the finished session was dropped to make room")
	_, err = m.Get(done.ID)
	assert.ErrorIs(t, err, ErrUnknown)
	running = append(running, s)

	// Full of running commands: refused, and nothing started.
	_, err = m.Start(sh("touch started"))
	assert.ErrorIs(t, err, ErrTooMany)
	assert.Len(t, m.List(), 3)

	// Ending one frees its slot once it has finished.
	require.NoError(t, running[0].Signal(syscall.SIGKILL))
	wait(t, running[0])
	_, err = m.Start(sh("true"))
	assert.NoError(t, err)
}

func TestFinishedSessionsExpire(t *testing.T) {
	m := newManager(t, Limits{Retain: 200 * time.Millisecond})
	s, err := m.Start(sh("echo kept"))
	require.NoError(t, err)
	wait(t, s)
	got, err := m.Get(s.ID)
	require.NoError(t, err, "readable after it finished")
	out, _, _ := got.Output(0)
	assert.Equal(t, "kept\n", string(out))
	assert.FileExists(t, s.LogPath)
	require.Eventually(t, func() bool { _, err := m.Get(s.ID); return errors.Is(err, ErrUnknown) },
		5*time.Second, 20*time.Millisecond, "dropped after its retention")
	assert.Eventually(t, func() bool { _, err := os.Stat(s.LogPath); return os.IsNotExist(err) },
		5*time.Second, 20*time.Millisecond, "its log removed with it")
}

// TestMemoryIsBounded: a flood keeps only the newest MemoryBytes in memory; the log
// has all of it up to its own cap, and says when it stopped.
func TestMemoryIsBounded(t *testing.T) {
	m := newManager(t, Limits{MemoryBytes: 4096, LogBytes: 1 << 20})
	s, err := m.Start(sh("head -c 3000000 /dev/zero | tr '\\0' x; echo; echo tail-line"))
	require.NoError(t, err)
	st := wait(t, s)
	assert.Equal(t, int64(3000000+len("\ntail-line\n")), st.Total)
	out, start, _ := s.Output(0)
	assert.Len(t, out, 4096)
	assert.Equal(t, st.Total-4096, start)
	assert.True(t, strings.HasSuffix(string(out), "x\ntail-line\n"))
	assert.LessOrEqual(t, cap(s.out.buf), 4096)
	logged, lerr := s.LogStatus()
	assert.Equal(t, int64(1<<20), logged)
	assert.ErrorContains(t, lerr, "cap")
	fi, err := os.Stat(s.LogPath)
	require.NoError(t, err)
	assert.Equal(t, int64(1<<20), fi.Size())
}

func TestWaitUntil(t *testing.T) {
	m := newManager(t, Limits{})
	s, err := m.Start(sh("echo booting; sleep 0.3; printf 'listening on :80'; sleep 600"))
	require.NoError(t, err)
	start := time.Now()
	r, err := s.Wait(context.Background(), WaitSpec{Until: regexp.MustCompile(`listening on :\d+`), Deadline: time.Now().Add(20 * time.Second)})
	require.NoError(t, err)
	assert.True(t, r.Matched, "matched an unfinished last line")
	assert.False(t, r.Exited)
	assert.Less(t, time.Since(start), 10*time.Second)

	// A pattern that already matched output before From does not match again.
	r, err = s.Wait(context.Background(), WaitSpec{From: r.Total, Until: regexp.MustCompile(`booting`), Deadline: time.Now().Add(300 * time.Millisecond)})
	require.NoError(t, err)
	assert.False(t, r.Matched)
}

// TestWaitCancelled: a cancelled wait returns the context's error; the command runs on.
func TestWaitCancelled(t *testing.T) {
	m := newManager(t, Limits{})
	s, err := m.Start(sh("sleep 600"))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = s.Wait(ctx, WaitSpec{})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.False(t, s.State().Exited)
	assert.NoError(t, syscall.Kill(s.Pgid, 0), "still running")
}

// TestWaitCancelledAsTheSessionEnds: a wait whose context is done when the session has
// ended reports the cancellation, not the end (its caller will not read the output),
// and a wait counts in Waiting only while it waits.
func TestWaitCancelledAsTheSessionEnds(t *testing.T) {
	m := newManager(t, Limits{})
	s, err := m.Start(sh("echo bye"))
	require.NoError(t, err)
	r, err := s.Wait(context.Background(), WaitSpec{})
	require.NoError(t, err)
	require.True(t, r.Exited)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.Wait(ctx, WaitSpec{})
	assert.ErrorIs(t, err, context.Canceled)

	s, err = m.Start(sh("sleep 600"))
	require.NoError(t, err)
	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := s.Wait(ctx, WaitSpec{}); done <- err }()
	require.Eventually(t, func() bool { return s.Waiting() == 1 }, 10*time.Second, time.Millisecond)
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	assert.Zero(t, s.Waiting())
}

// TestOrphanDoesNotHoldTheExit: the session finishes when its command exits, though a
// background process holds the output open; that process's later output is kept.
func TestOrphanDoesNotHoldTheExit(t *testing.T) {
	for _, tty := range []bool{false, true} {
		m := newManager(t, Limits{})
		// On a terminal the shell's exit hangs up its group, as closing a window does;
		// an orphan that ignores SIGHUP (nohup) lives on.
		// The orphan writes only once the test has seen the exit (a file it waits for),
		// so an exit that waited for the orphan comes only after 30 s: wait's 20 s
		// deadline fails it.
		release := filepath.Join(t.TempDir(), "release")
		sp := sh("(trap '' HUP; i=0; until [ -e " + release + " ] || [ $i -ge 1500 ]; do sleep 0.02; i=$((i+1)); done; echo from-orphan) & sleep 0.1; echo parent") // the trap is set before the shell exits
		sp.TTY = tty
		s, err := m.Start(sp)
		require.NoError(t, err)
		st := wait(t, s)
		assert.Zero(t, st.Code)
		out, _, _ := s.Output(0)
		assert.NotContains(t, string(out), "from-orphan", "tty %v: the exit came before the orphan wrote", tty)
		require.NoError(t, os.WriteFile(release, nil, 0o600))
		require.Eventually(t, func() bool {
			out, _, _ := s.Output(0)
			return strings.Contains(string(out), "from-orphan")
		}, 10*time.Second, 20*time.Millisecond, "tty %v: the orphan's later output is recorded: %q", tty, func() string { o, _, _ := s.Output(0); return string(o) }())
	}
}

func TestIDsStartAtRandom(t *testing.T) {
	a := newManager(t, Limits{})
	b := newManager(t, Limits{})
	sa, err := a.Start(sh("true"))
	require.NoError(t, err)
	sb, err := b.Start(sh("true"))
	require.NoError(t, err)
	assert.NotEqual(t, sa.ID, sb.ID, "another agent's first id is not this one's")
	_, err = b.Get(sa.ID)
	assert.ErrorIs(t, err, ErrUnknown)
}

func TestWriteNeedsATerminal(t *testing.T) {
	m := newManager(t, Limits{})
	s, err := m.Start(sh("cat"))
	require.NoError(t, err)
	assert.ErrorIs(t, s.Write([]byte("x")), ErrNoInput)
	st := wait(t, s) // cat read /dev/null: end of file at once
	assert.Zero(t, st.Code)

	sp := sh("read line; echo got:$line")
	sp.TTY = true
	s, err = m.Start(sp)
	require.NoError(t, err)
	require.NoError(t, s.Write([]byte("hi\n")))
	wait(t, s)
	out, _, _ := s.Output(0)
	assert.Equal(t, "hi\ngot:hi\n", Render(out, 24))
}

// TestFullTableStaysBounded: a full table of sessions that each printed 1 MiB holds
// about MaxSessions × MemoryBytes of output in memory (64 MiB by default), not the
// 256 MiB they printed.
func TestFullTableStaysBounded(t *testing.T) {
	m := newManager(t, Limits{LogBytes: 64 << 10})
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	sessions := make([]*Session, DefaultMaxSessions)
	for i := range sessions {
		s, err := m.Start(sh("head -c 1048576 /dev/zero"))
		require.NoError(t, err)
		sessions[i] = s
	}
	for _, s := range sessions {
		assert.Equal(t, int64(1<<20), wait(t, s).Total)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("heap grew %d MiB for %d sessions of 1 MiB output", grown>>20, len(sessions))
	assert.Less(t, grown, int64(DefaultMaxSessions*DefaultMemoryBytes+16<<20))
	_, err := m.Start(sh("true"))
	assert.NoError(t, err, "a full table of finished sessions makes room")
}

// TestWriteToAProgramNotReading: input nobody reads fails after the write timeout
// instead of holding the call for ever.
func TestWriteToAProgramNotReading(t *testing.T) {
	m := newManager(t, Limits{})
	sp := sh("sleep 600")
	sp.TTY = true
	s, err := m.Start(sp)
	require.NoError(t, err)
	err = s.Write([]byte(strings.Repeat("line\n", 1<<18)))
	assert.ErrorContains(t, err, "is not reading its input")
}

// TestFinishedGroupIsNotSignalled: once a session's command was reaped and nothing
// holds its output, its group counts as gone (the number may be reused by then), but not
// while an orphan of it still holds the output.
func TestFinishedGroupIsNotSignalled(t *testing.T) {
	m := newManager(t, Limits{})
	for _, tty := range []bool{false, true} {
		sp := sh("true")
		sp.TTY = tty
		s, err := m.Start(sp)
		require.NoError(t, err)
		wait(t, s)
		assert.Eventually(t, s.groupGone, 5*time.Second, 10*time.Millisecond, "tty %v", tty)

		sp = sh("trap '' HUP; sleep 600 & sleep 0.1")
		sp.TTY = tty
		s, err = m.Start(sp)
		require.NoError(t, err)
		wait(t, s)
		assert.False(t, s.groupGone(), "tty %v: an orphan holds the output", tty)
		require.NoError(t, s.Signal(syscall.SIGKILL))
		assert.Eventually(t, s.groupGone, 5*time.Second, 10*time.Millisecond, "tty %v: the orphan was killed", tty)
	}
}

// TestWaitIsNotAPollingLoop: a wait on a silent command wakes only for its deadline, and
// one on a command that prints a line every 100 ms wakes about once a line.
func TestWaitIsNotAPollingLoop(t *testing.T) {
	m := newManager(t, Limits{})
	s, err := m.Start(sh("sleep 600"))
	require.NoError(t, err)
	r, err := s.Wait(context.Background(), WaitSpec{Until: regexp.MustCompile("never"), Deadline: time.Now().Add(time.Second)})
	require.NoError(t, err)
	assert.Zero(t, r.wakes, "nothing happened, so nothing woke it before its deadline")

	s, err = m.Start(sh("for i in 1 2 3 4 5; do sleep 0.1; echo $i; done"))
	require.NoError(t, err)
	r, err = s.Wait(context.Background(), WaitSpec{Until: regexp.MustCompile("never"), Deadline: time.Now().Add(20 * time.Second)})
	require.NoError(t, err)
	assert.True(t, r.Exited)
	assert.LessOrEqual(t, r.wakes, 5+3, "a wake per line, the exit and the settling")
}

func TestLogDirMustBePrivate(t *testing.T) {
	open := t.TempDir()
	require.NoError(t, os.Chmod(open, 0o777))
	_, err := NewManager(open, Limits{})
	assert.ErrorContains(t, err, "not a directory private to this user")
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(t.TempDir(), link))
	_, err = NewManager(link, Limits{})
	assert.ErrorContains(t, err, "not a directory private to this user")
}

// TestSettleWaitsForALateReader: a loaded machine may run the output's reader long
// after the command exited. The session settles with the command's last line, not with
// whatever the reader had copied when a grace ran out; and with a background process
// holding the output, it still settles after a quiet grace rather than waiting for it.
func TestSettleWaitsForALateReader(t *testing.T) {
	for _, tc := range []struct {
		name, cmd string
		tty       bool
	}{
		{"pipe", "echo last line", false},
		{"pty", "echo last line", true},
		{"pipe held by a background process", "sleep 30 & echo last line", false},
		{"pty held by a background process", "sleep 30 & echo last line", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			argv := []string{shell.Path(), "-c", tc.cmd}
			s := &Session{changed: make(chan struct{}), out: ring{max: 1 << 20}}
			var out io.Reader
			var waitExit func() (int, error)
			if tc.tty {
				p, err := shell.StartPty(context.Background(), argv, shell.PtyOptions{})
				require.NoError(t, err)
				t.Cleanup(func() { _ = p.Close() })
				s.Pgid, s.unread, out, waitExit = p.Pgid(), p.Pending, p, p.Wait
			} else {
				p, err := shell.Spawn(argv, shell.SpawnOptions{})
				require.NoError(t, err)
				t.Cleanup(func() { _ = p.Signal(syscall.SIGKILL); p.Output().Close() })
				s.Pgid, s.unread, out, waitExit = p.Pid(), p.Pending, p.Output(), p.Wait
			}
			outDone := make(chan struct{})
			go func() {
				code, err := waitExit()
				s.finish(code, err, outDone)
			}()
			time.Sleep(5 * exitGrace) // the reader has not run yet
			go s.pump(out, outDone)
			st := wait(t, s)
			assert.Zero(t, st.Code)
			got, _, _ := s.Output(0)
			assert.Contains(t, string(got), "last line")
		})
	}
}
