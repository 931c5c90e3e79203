//go:build linux

package sbxsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultAutoStop is how long a sandbox runs after its last session ended (real sbx:
// about 30 s, SBX#452).
const DefaultAutoStop = 30 * time.Second

// autoStopFrom reads SBXSIM_AUTOSTOP: a Go duration or whole seconds; "0" (or "off")
// turns auto-stop off, for unit tests only.
func autoStopFrom(lookup func(string) (string, bool)) (time.Duration, error) {
	v, ok := lookup("SBXSIM_AUTOSTOP")
	if !ok || v == "" {
		return DefaultAutoStop, nil
	}
	if v == "off" {
		return 0, nil
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("SBXSIM_AUTOSTOP=%q: want a duration (30s) or seconds", v)
	}
	return d, nil
}

// A session is one running `exec` (real sbx also counts an attached agent): it holds a
// shared flock on the sandbox's sessions file for its whole life. A stopper takes the
// lock exclusively, so it stops the sandbox only when no session is open, and a new
// session waits for a stop under way to finish (then its exec starts the sandbox
// again).
func (st Store) sessionsFile(name string) string { return filepath.Join(st.dir(name), "sessions") }
func (st Store) stopperFile(name string) string  { return filepath.Join(st.dir(name), "autostop") }

// session is an open session's hold on its sandbox.
type session struct{ f *os.File }

// openSession registers a session, waiting while a stop is under way.
func (st Store) openSession(ctx context.Context, name string) (*session, error) {
	f, err := os.OpenFile(st.sessionsFile(name), os.O_RDWR|os.O_CREATE, 0o600)
	if errors.Is(err, os.ErrNotExist) {
		return nil, errNoSandbox{name}
	}
	if err != nil {
		return nil, fmt.Errorf("opening a session in %s: %w", name, err)
	}
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
		if err == nil {
			return &session{f}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("opening a session in %s: %w", name, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// armAutoStop notes that a session ended (or that the sandbox started with none): the
// sessions file's modification time is the time of the last end. It then makes sure a
// stopper watches the sandbox — a detached sbxsim that stops it once no session has
// been open for the auto-stop delay (RunAutoStop). There is at most one, recorded in
// the autostop file; remove kills it, so no sbxsim process outlives a removed sandbox.
// While it lives, arming is a utime and a /proc read: exec pays no process start.
func (m *Manager) armAutoStop(ctx context.Context, sb *Sandbox) error {
	if sb.AutoStop <= 0 {
		return nil
	}
	now := time.Now()
	path := m.Store.sessionsFile(sb.Name)
	if err := os.Chtimes(path, now, now); errors.Is(err, os.ErrNotExist) {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil // removed meanwhile: nothing to stop
		}
		f.Close()
	}
	if p := m.Store.stopper(sb.Name); p != nil && p.Alive() {
		return nil
	}
	l, err := m.Store.Lock(ctx, sb.Name)
	if err != nil {
		return nil
	}
	defer l.Unlock()
	if p := m.Store.stopper(sb.Name); p != nil && p.Alive() {
		return nil // another session's end started one meanwhile
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	cmd := exec.Command(m.Self, "__autostop", m.Store.Root, sb.Name, sb.AutoStop.String())
	cmd.Env = []string{"PATH=" + defaultPath}
	cmd.Dir = "/"
	// Its own session and /dev/null for stdio: a caller waiting for sbx's output must not
	// wait for the stopper.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("arming the auto-stop of %s: %w", sb.Name, err)
	}
	defer cmd.Process.Release()
	p, err := procOf(cmd.Process.Pid)
	if err != nil {
		return nil // already gone
	}
	b, _ := json.Marshal(p)
	if err := os.WriteFile(m.Store.stopperFile(sb.Name), b, 0o600); err != nil {
		_ = cmd.Process.Kill()
		return fmt.Errorf("arming the auto-stop of %s: %w", sb.Name, err)
	}
	return nil
}

// stopper is the recorded stopper of a sandbox, or nil.
func (st Store) stopper(name string) *Proc {
	b, err := os.ReadFile(st.stopperFile(name))
	if err != nil {
		return nil
	}
	var p Proc
	if json.Unmarshal(b, &p) != nil || p.Pid <= 0 {
		return nil
	}
	return &p
}

// waitRecorded waits until the process that started this stopper has recorded it: it
// does so under the sandbox's lock, after the start, so the lock is free once the
// record is there. (Read before, there is none, and the stopper would give up.) False
// when the sandbox is gone; after a minute's wait it goes on all the same.
func (st Store) waitRecorded(name string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := st.Lock(ctx, name)
	if err != nil {
		var gone errNoSandbox
		return !errors.As(err, &gone)
	}
	l.Unlock()
	return true
}

// killStopper ends the recorded stopper, if it is still that process. The caller holds
// the sandbox's lock.
func (st Store) killStopper(name string) {
	if p := st.stopper(name); p != nil && p.Alive() {
		p.Signal(syscall.SIGKILL)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		p.waitGone(ctx, time.Second) // gone before rm returns
		cancel()
	}
	_ = os.Remove(st.stopperFile(name))
}

// RunAutoStop is the hidden `__autostop STATE NAME DELAY` mode, a sandbox's stopper: it
// stops the sandbox once no session is open and the last one ended DELAY ago, and exits
// when the sandbox stopped, went away, or another stopper is recorded.
func RunAutoStop(args []string, self string) int {
	if len(args) != 3 {
		return 2
	}
	delay, err := time.ParseDuration(args[2])
	if err != nil || delay <= 0 {
		return 2
	}
	m := &Manager{Store: Store{Root: args[0]}, Self: self, Stderr: os.Stderr}
	name := args[1]
	poll := min(delay, time.Second) // how often an open session is looked at again
	mine := func() bool { p := m.Store.stopper(name); return p != nil && p.Pid == os.Getpid() }
	if !m.Store.waitRecorded(name) {
		return 0
	}
	for {
		fi, err := os.Stat(m.Store.sessionsFile(name))
		if err != nil {
			return 0
		}
		if wait := delay - time.Since(fi.ModTime()); wait > 0 {
			time.Sleep(wait)
			continue
		}
		if !mine() {
			return 0
		}
		if sb, err := m.Store.Load(name); err != nil || !sb.Running() {
			return 0 // stopped otherwise: a later start arms a new stopper
		}
		if stopped, err := m.stopIfIdle(name, delay); stopped || err != nil {
			if err != nil {
				fmt.Fprintf(os.Stderr, "sbxsim: auto-stop of %s: %v\n", name, err)
				return 1
			}
			return 0
		}
		time.Sleep(poll)
	}
}

// stopIfIdle stops the sandbox if no session is open and none ended within delay
// (holding the sessions file exclusively, so that a new session waits for the stop).
func (m *Manager) stopIfIdle(name string, delay time.Duration) (bool, error) {
	f, err := os.OpenFile(m.Store.sessionsFile(name), os.O_RDWR, 0)
	if err != nil {
		return false, nil
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return false, nil // a session is open
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := m.Store.Lock(ctx, name)
	if err != nil {
		return true, nil // removed
	}
	defer l.Unlock()
	if fi, err := f.Stat(); err != nil || time.Since(fi.ModTime()) < delay {
		return false, nil // a session ended meanwhile
	}
	if p := m.Store.stopper(name); p == nil || p.Pid != os.Getpid() {
		return true, nil // replaced
	}
	_ = os.Remove(m.Store.stopperFile(name))
	sb, err := m.Store.Load(name)
	if err != nil || !sb.Running() {
		return true, nil
	}
	return true, m.stop(ctx, sb)
}

// waitSessionsEnded waits (up to d) until no exec session of the sandbox is open: after
// a stop, the clients of the sessions it ended have exited when `sbx stop` returns. The
// caller must not hold the sandbox's lock (an ending session takes it to re-arm).
func (st Store) waitSessionsEnded(name string, d time.Duration) {
	f, err := os.OpenFile(st.sessionsFile(name), os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer f.Close()
	deadline := time.Now().Add(d)
	for unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
}
