package sbx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Teardown modes (DOCKER_SANDBOX_TEARDOWN).
const (
	TeardownRemove = "remove"
	TeardownStop   = "stop"
	TeardownNone   = "none"
)

// Session is the sandbox of one backend process: pinned by DOCKER_SANDBOX or named
// pi-sbx-<pid>-<random>, created on first need with the workspace as primary, and torn
// down on orderly shutdown if this session created it.
type Session struct {
	Client    *Client
	Name      string
	Pinned    bool   // named by DOCKER_SANDBOX: never removed
	Workspace string // primary workspace (absolute)
	Teardown  string // TeardownRemove, TeardownStop or TeardownNone
	Progress  io.Writer
	// Owner is the process whose death tears a created sandbox down (the watchdog); 0
	// means no watchdog.
	Owner int
	// ReadOnly mounts the workspace read-only (DOCKER_SANDBOX_WORKSPACE_RO): sbx wants a
	// read/write primary, so a scratch directory Home/.sbx-prime-<name> is the primary
	// and the workspace an additional `:ro` one.
	ReadOnly bool
	Home     string

	mu       sync.Mutex
	ensured  bool
	created  bool
	watchdog *Watchdog
}

// NewSession reads DOCKER_SANDBOX and DOCKER_SANDBOX_TEARDOWN from environ. Without a
// pinned name it makes a session name from pid.
func NewSession(c *Client, environ []string, pid int, workspace string, progress io.Writer) (*Session, error) {
	s := &Session{Client: c, Workspace: workspace, Progress: progress, Owner: pid}
	var teardown string
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "DOCKER_SANDBOX":
			s.Name, s.Pinned = v, v != ""
		case "DOCKER_SANDBOX_TEARDOWN":
			teardown = v
		case "DOCKER_SANDBOX_WORKSPACE_RO":
			switch strings.ToLower(v) {
			case "1", "true", "ro", "yes":
				s.ReadOnly = true
			}
		case "HOME":
			s.Home = v
		}
	}
	if s.Pinned {
		if err := ValidateName(s.Name); err != nil {
			return nil, fmt.Errorf("DOCKER_SANDBOX: %w", err)
		}
	} else {
		name, err := SessionName(pid, nil)
		if err != nil {
			return nil, err
		}
		s.Name = name
	}
	switch teardown {
	case "":
		s.Teardown = TeardownRemove
		if s.Pinned {
			s.Teardown = TeardownNone
		}
	case TeardownRemove, TeardownStop, TeardownNone:
		s.Teardown = teardown
	default:
		return nil, fmt.Errorf("DOCKER_SANDBOX_TEARDOWN=%q: want remove, stop or none", teardown)
	}
	if s.Pinned && s.Teardown == TeardownRemove {
		s.Teardown = TeardownNone // a pinned sandbox is the user's: never removed
	}
	return s, nil
}

// Ensure returns the session's sandbox name, creating the sandbox on the first call if
// it does not exist. Once ensured it is never re-created: if it disappears later, calls
// fail (ErrMissing) rather than silently starting over in a fresh one.
func (s *Session) Ensure(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ensured {
		return s.Name, nil
	}
	_, err := s.Client.Lookup(ctx, s.Name)
	switch {
	case err == nil:
	case errors.Is(err, ErrMissing):
		s.logf("pi-sbx-backend: creating sandbox %s for %s (this takes a while the first time)…\n", s.Name, s.Workspace)
		start := time.Now()
		workspaces, err := s.workspaces()
		if err != nil {
			return "", err
		}
		if err := s.Client.Create(ctx, s.Name, CreateOpts{Workspaces: workspaces, Progress: s.Progress}); err != nil {
			return "", fmt.Errorf("creating sandbox %s: %w", s.Name, err)
		}
		s.created = true
		s.logf("pi-sbx-backend: sandbox %s ready in %.1fs\n", s.Name, time.Since(start).Seconds())
		if s.Owner > 0 && s.Teardown != TeardownNone {
			// Even a kill -9 of this process must not leave the sandbox running.
			w, err := s.Client.StartWatchdog(s.Owner, s.Name, s.Teardown, 0)
			if err != nil {
				s.logf("pi-sbx-backend: %v (the sandbox is torn down on orderly shutdown only)\n", err)
			}
			s.watchdog = w
		}
	default:
		return "", fmt.Errorf("looking up sandbox %s: %w", s.Name, err)
	}
	s.ensured = true
	return s.Name, nil
}

// Close tears the sandbox down as DOCKER_SANDBOX_TEARDOWN says, if this session created
// it. It tries a few times, since sbx may be briefly busy.
func (s *Session) Close(ctx context.Context) error {
	s.mu.Lock()
	created, w := s.created, s.watchdog
	s.watchdog = nil
	s.mu.Unlock()
	if !created || s.Teardown == TeardownNone {
		return nil
	}
	var err error
	for try := 0; try < 3; try++ {
		if try > 0 && !pause(ctx, time.Second) {
			err = errors.Join(err, ctx.Err())
			break
		}
		if s.Teardown == TeardownStop {
			err = s.Client.Stop(ctx, s.Name)
		} else {
			err = s.Client.Rm(ctx, s.Name)
		}
		if err == nil || errors.Is(err, ErrMissing) {
			if w != nil {
				w.Stop() // done here; it need not try again when this process exits
			}
			if s.ReadOnly && s.Teardown == TeardownRemove {
				if dir, err := s.scratch(); err == nil {
					os.RemoveAll(dir) // ours: made for this sandbox only
				}
			}
			return nil
		}
	}
	// The watchdog stays armed: it tries again once this process is gone.
	return fmt.Errorf("tearing down sandbox %s: %w", s.Name, err)
}

// workspaces returns the mounts of a new sandbox: the workspace as primary, or in
// read-only mode a scratch primary and the workspace read-only.
func (s *Session) workspaces() ([]string, error) {
	if !s.ReadOnly {
		return []string{s.Workspace}, nil
	}
	scratch, err := s.scratch()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		return nil, fmt.Errorf("making the scratch workspace: %w", err)
	}
	return []string{scratch, s.Workspace + ":ro"}, nil
}

func (s *Session) scratch() (string, error) {
	if s.Home == "" || !filepath.IsAbs(s.Home) {
		return "", errors.New("DOCKER_SANDBOX_WORKSPACE_RO needs HOME for its scratch workspace")
	}
	return filepath.Join(s.Home, ".sbx-prime-"+s.Name), nil
}

func (s *Session) logf(format string, args ...any) {
	if s.Progress != nil {
		fmt.Fprintf(s.Progress, format, args...)
	}
}

// pause waits d, or less if ctx ends first (then it returns false).
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
