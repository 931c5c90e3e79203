// Package terminal keeps the commands an agent runs for a client as sessions it can come
// back to: started with or without a pseudo-terminal, typed into, waited on (until they
// exit, or their output matches a pattern), signalled as a process group, listed; their
// output bounded in memory, logged in full to a file, and rendered as the screen showed
// it (Render). It knows nothing of sandboxes or protocols; processes are started by
// shell/.
package terminal

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/shell"
)

// Limits of a Manager; zero fields take the defaults below.
type Limits struct {
	// MaxSessions caps the sessions held at once, running or finished. When a new one
	// would pass it, the finished session that ended first is dropped; if every one
	// still runs, the new one is refused.
	MaxSessions int
	// MemoryBytes caps the output each session keeps in memory (the newest bytes); the
	// log file has all of it up to LogBytes.
	MemoryBytes int
	// LogBytes caps each session's log file.
	LogBytes int64
	// Retain is how long a finished session stays readable.
	Retain time.Duration
}

// The defaults: 256 sessions × 256 KiB is at most 64 MiB of output in memory.
const (
	DefaultMaxSessions = 256
	DefaultMemoryBytes = 256 << 10
	DefaultLogBytes    = 256 << 20
	DefaultRetain      = 10 * time.Minute
)

func (l Limits) norm() Limits {
	if l.MaxSessions <= 0 {
		l.MaxSessions = DefaultMaxSessions
	}
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = DefaultMemoryBytes
	}
	if l.LogBytes <= 0 {
		l.LogBytes = DefaultLogBytes
	}
	if l.Retain <= 0 {
		l.Retain = DefaultRetain
	}
	return l
}

// ErrUnknown is the error for a session id the Manager does not hold: never started
// here, dropped after its retention, or started before the agent (or the VM) restarted.
var ErrUnknown = errors.New("unknown session")

// ErrTooMany is the error for a start while every session slot holds a running command.
var ErrTooMany = errors.New("too many sessions")

// Manager is a table of sessions.
type Manager struct {
	limits Limits
	logDir string

	mu       sync.Mutex
	sessions map[int]*Session
	starting int // slots held by starts in progress
	next     int
	closed   bool
}

// NewManager returns a Manager whose sessions log to files in logDir (created, mode
// 0700). Session ids start at a random number, so that an id from before a restart of
// the agent is unknown to the new one rather than someone else's session.
func NewManager(logDir string, l Limits) (*Manager, error) {
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the terminal log directory: %w", err)
	}
	// In a shared /tmp someone else could have made it first: it must be ours alone.
	if err := privateDir(logDir); err != nil {
		return nil, err
	}
	var seed [4]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return nil, fmt.Errorf("seeding session ids: %w", err)
	}
	// One of 2^20 starting points: an id from before a restart names nothing here
	// unless a draw of about a million lands within the sessions either side made, and
	// ids stay at most seven digits.
	first := int(binary.BigEndian.Uint32(seed[:])>>12) + 1000
	return &Manager{limits: l.norm(), logDir: logDir, sessions: map[int]*Session{}, next: first}, nil
}

// Spec describes a command to start.
type Spec struct {
	Cmd        string   // shown in listings
	Argv       []string // what runs
	Dir        string
	Env        []string // added to the agent's environment; a later KEY wins
	TTY        bool     // a pseudo-terminal for stdin, stdout and stderr; else stdin is /dev/null
	Cols, Rows uint16   // the terminal's size (0: 80×24)
	Timeout    time.Duration
}

// Start starts a session.
func (m *Manager) Start(sp Spec) (*Session, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, errors.New("terminal sessions are shutting down")
	}
	m.sweep(time.Now())
	if len(m.sessions)+m.starting >= m.limits.MaxSessions && !m.evictOne() {
		m.mu.Unlock()
		return nil, fmt.Errorf("%w: %d are running, the most this sandbox's agent keeps; end one with kill_session", ErrTooMany, len(m.sessions))
	}
	id := m.next
	m.next++
	s := &Session{ID: id, Cmd: sp.Cmd, TTY: sp.TTY, Started: time.Now(), rows: 24, changed: make(chan struct{}),
		out: ring{max: m.limits.MemoryBytes}, logMax: m.limits.LogBytes}
	m.starting++ // holds a slot while starting
	m.mu.Unlock()

	err := m.start(s, sp)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.starting--
	if err != nil {
		return nil, err
	}
	m.sessions[id] = s
	if m.closed {
		m.drop(id, s)
		return nil, errors.New("terminal sessions are shutting down")
	}
	return s, nil
}

func (m *Manager) start(s *Session, sp Spec) error {
	s.LogPath = filepath.Join(m.logDir, fmt.Sprintf("%d.log", s.ID))
	log, err := os.OpenFile(s.LogPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("creating the session log: %w", err)
	}
	s.log = log
	outDone := make(chan struct{})
	var done <-chan struct{}
	var wait func() (int, error)
	if sp.TTY {
		p, err := shell.StartPty(context.Background(), sp.Argv, shell.PtyOptions{Dir: sp.Dir, Env: sp.Env, Cols: sp.Cols, Rows: sp.Rows})
		if err != nil {
			log.Close()
			return err
		}
		s.Pgid, s.input, s.resize, done, wait = p.Pgid(), p, p.Resize, p.Done(), p.Wait
		if sp.Rows > 0 {
			s.rows = int(sp.Rows)
		}
		s.stop = func() { _ = p.Close() }
		s.unread = p.Pending
		go s.pump(p, outDone)
	} else {
		p, err := shell.Spawn(sp.Argv, shell.SpawnOptions{Dir: sp.Dir, Env: sp.Env})
		if err != nil {
			log.Close()
			return err
		}
		s.Pgid, done, wait, s.unread = p.Pid(), p.Done(), p.Wait, p.Pending
		out := p.Output()
		s.stop = func() {
			_ = s.Signal(syscall.SIGKILL) // not once the group is provably gone
			out.Close()
		}
		go s.pump(out, outDone)
	}
	go func() {
		var timeout <-chan time.Time
		if sp.Timeout > 0 {
			t := time.NewTimer(sp.Timeout)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-done:
		case <-timeout:
			s.mu.Lock()
			s.timedOut = true
			s.mu.Unlock()
			_ = s.Signal(syscall.SIGKILL)
		}
		code, err := wait()
		s.finish(code, err, outDone)
	}()
	return nil
}

// Get returns the session with the given id.
func (m *Manager) Get(id int) (*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(time.Now())
	s, ok := m.sessions[id]
	if !ok {
		return nil, fmt.Errorf("%w %d", ErrUnknown, id)
	}
	return s, nil
}

// List returns the sessions, oldest first.
func (m *Manager) List() []*Session {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(time.Now())
	out := make([]*Session, 0, len(m.sessions))
	for _, s := range m.sessions {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Retain is how long a finished session stays readable.
func (m *Manager) Retain() time.Duration { return m.limits.Retain }

// Limits returns the Manager's limits.
func (m *Manager) Limits() Limits { return m.limits }

// sweep drops finished sessions older than the retention; m.mu is held.
func (m *Manager) sweep(now time.Time) {
	for id, s := range m.sessions {
		if st := s.State(); st.Exited && now.Sub(st.Ended) > m.limits.Retain {
			m.drop(id, s)
		}
	}
}

// evictOne drops the finished session that ended first; false if none has; m.mu is held.
func (m *Manager) evictOne() bool {
	var oldest *Session
	var at time.Time
	for _, s := range m.sessions {
		if st := s.State(); st.Exited && (oldest == nil || st.Ended.Before(at)) {
			oldest, at = s, st.Ended
		}
	}
	if oldest == nil {
		return false
	}
	m.drop(oldest.ID, oldest)
	return true
}

// drop forgets a session: what it left running in its group is killed, its terminal
// closed and its log removed; m.mu is held.
func (m *Manager) drop(id int, s *Session) {
	delete(m.sessions, id)
	go func() {
		if s.stop != nil {
			s.stop()
		}
		s.mu.Lock()
		if s.log != nil {
			s.log.Close()
		}
		s.mu.Unlock()
		os.Remove(s.LogPath)
	}()
}

// Close kills every session's process group; the Manager starts no more.
func (m *Manager) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	for id, s := range m.sessions {
		m.drop(id, s)
	}
}

// privateDir checks that dir is a directory (not a link) of this user's that no one
// else can write.
func privateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("checking the terminal log directory: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("the terminal log directory %s is not a directory private to this user (%v)", dir, fi.Mode())
	}
	return nil
}
