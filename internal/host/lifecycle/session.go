package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// Teardown modes (DOCKER_SANDBOX_TEARDOWN).
const (
	TeardownRemove = "remove"
	TeardownStop   = "stop"
	TeardownNone   = "none"
)

// SessionOptions configure a Session; NewSession checks them and fills the defaults.
type SessionOptions struct {
	// Name is the sandbox; "" makes a session name pi-sbx-<Owner>-<random>.
	Name      string
	Pinned    bool   // named by DOCKER_SANDBOX: never removed
	Workspace string // primary workspace (absolute)
	Teardown  string // TeardownRemove, TeardownStop or TeardownNone; "" = remove (none when pinned)
	Progress  io.Writer
	// Owner is the process whose death tears a created sandbox down (the watchdog); 0
	// means no watchdog.
	Owner int
	// Locker is the program the watchdog takes the lease lock with (this executable, its
	// WatchdogLockCommand); "" leaves the watchdog to decide without the lock.
	Locker string
	// ReadOnly mounts the workspace read-only (DOCKER_SANDBOX_WORKSPACE_RO): sbx wants a
	// read/write primary, so a scratch directory Home/.sbx-prime-<name> is the primary
	// and the workspace an additional `:ro` one.
	ReadOnly bool
	Home     string
	// Mode is the workspace mode (ModeRW, ModeRO, ModeReview; "" = ModeRW). In review
	// mode a git workspace is created with Clone, any other with ReadOnly's mounts and a
	// copy-on-write layer that Started lays over the workspace in the VM.
	Mode string
	// Clone creates the sandbox with `sbx create --clone` (review mode, git workspace).
	Clone bool
	// Started, when set, runs once the sandbox exists, before anyone uses it: created
	// says this session made it. Review mode brings the host's start state in here.
	Started func(ctx context.Context, name string, created bool) error
	// Created, when set, runs right after this session created the sandbox, before
	// Started: the network rules the session and its project ask for. Its error fails
	// the session's start (the sandbox, this session's, is torn down as usual).
	Created func(ctx context.Context, name string) error
	// Keep, when set, runs before teardown removes the sandbox (review mode): it saves
	// the sandbox's work on the host and reports an error when the sandbox must not be
	// removed (unlanded work, or work that could not be saved); the sandbox is then
	// stopped instead, unless Force.
	Keep func(ctx context.Context, name string) error
	// Force removes a sandbox whose work Keep would keep (DOCKER_SANDBOX_TEARDOWN_FORCE).
	Force bool
	// HostFiles are the host files the session executes or installs into the VM. A
	// sandbox that already exists is refused if it mounts any of them (its mounts may
	// be more than this session's workspace); see CheckHostFiles.
	HostFiles []sbx.HostFile
	// Resources are the create options (DOCKER_SANDBOX_CPUS/MEMORY/TEMPLATE).
	Resources sbx.Resources
	// Owners keeps the owner record of a sandbox this session creates (for GC); nil:
	// none is kept.
	Owners *Owners
	// KeepAlive holds a session open in the sandbox while this one is (see
	// keepalive.go), so that sbx's auto-stop does not end what runs there between calls.
	KeepAlive bool
	// Role names what holds the session's lease on the sandbox (serve, shell), so that a
	// teardown left to another holder can say who keeps it.
	Role string
	// Cloud are a cloud sandbox's create options (with a Client whose Cloud is set: the
	// sandbox mounts nothing, and Started ships the workspace in).
	Cloud sbx.CloudOpts
	// TTLEvery is how often a cloud sandbox's time to live is extended while the session
	// is open (DefaultTTLEvery when zero; see cloudttl.go).
	TTLEvery time.Duration
}

// Session is the sandbox of one backend process: pinned by DOCKER_SANDBOX or named
// pi-sbx-<pid>-<random>, created on first need with the workspace as primary, and torn
// down on orderly shutdown if this session created it. Its options are fixed once
// NewSession returns it.
type Session struct {
	Client *sbx.Client
	SessionOptions

	mu        sync.Mutex
	ensured   bool
	created   bool // this session ran (or began) sbx create: teardown applies
	closed    bool
	removed   bool        // removed on purpose (Removed): never made again
	inflight  *ensureCall // the one creation under way, shared by every waiting caller
	watchdog  *sbx.Watchdog
	keep      *keepAlive
	cloudLife CloudLife // a cloud sandbox's time (cloudttl.go)
	// life bounds the session's own work (creation): it is not any one call's, so a
	// cancelled call cannot leave a half-made sandbox behind; Close ends it.
	life context.Context
	end  context.CancelFunc
}

// ensureCall is one run of ensure; done is closed when err is set.
type ensureCall struct {
	done chan struct{}
	err  error
}

// NewSession checks o and returns the session it describes: without a Name, a session
// name made from o.Owner; a pinned sandbox is never removed.
func NewSession(c *sbx.Client, o SessionOptions) (*Session, error) {
	if o.Pinned {
		if err := sbx.ValidateName(o.Name); err != nil {
			return nil, fmt.Errorf("DOCKER_SANDBOX: %w", err)
		}
	} else if o.Name == "" {
		name, err := SessionName(o.Owner, nil)
		if err != nil {
			return nil, err
		}
		o.Name = name
	}
	switch o.Mode {
	case "":
		o.Mode = ModeRW
	case ModeRW, ModeReview:
	case ModeRO:
		o.ReadOnly = true
	default:
		return nil, fmt.Errorf("workspace mode %q: want rw, ro or review", o.Mode)
	}
	if err := o.Resources.Validate(); err != nil {
		return nil, err
	}
	switch o.Teardown {
	case "":
		o.Teardown = TeardownRemove
	case TeardownRemove, TeardownStop, TeardownNone:
	default:
		return nil, fmt.Errorf("DOCKER_SANDBOX_TEARDOWN=%q: want remove, stop or none", o.Teardown)
	}
	if o.Pinned && o.Teardown == TeardownRemove {
		o.Teardown = TeardownNone // a pinned sandbox is the user's: never removed
	}
	return &Session{Client: c, SessionOptions: o}, nil
}

// Ensure returns the session's sandbox name, creating the sandbox on the first call if
// it does not exist. Once ensured it is not looked up again: if it disappears later, the
// agent's channel finds it gone (ErrMissing) and Lost makes the next Ensure create it
// again.
//
// The creation runs on the session's own context, not ctx: concurrent callers share it,
// and a caller whose ctx ends stops waiting while the creation goes on (the next call
// waits for the same one). The watchdog is armed before sbx create starts, and from then
// on Close tears the sandbox down, whatever became of the create.
func (s *Session) Ensure(ctx context.Context) (string, error) {
	s.mu.Lock()
	switch {
	case s.ensured:
		s.holdOpenLocked()
		s.mu.Unlock()
		return s.Name, nil
	case s.closed:
		s.mu.Unlock()
		return "", fmt.Errorf("sandbox %s: the session is closed", s.Name)
	}
	c := s.inflight
	if c == nil {
		c = &ensureCall{done: make(chan struct{})}
		s.inflight = c
		life := s.lifeLocked()
		go s.runEnsure(life, c)
	}
	s.mu.Unlock()
	select {
	case <-c.done:
		if c.err != nil {
			return "", c.err
		}
		return s.Name, nil
	case <-ctx.Done():
		return "", fmt.Errorf("waiting for sandbox %s: %w", s.Name, ctx.Err())
	}
}

// lifeLocked returns the session's context, made on first use (s.mu held).
func (s *Session) lifeLocked() context.Context {
	if s.life == nil {
		s.life, s.end = context.WithCancel(context.Background())
	}
	return s.life
}

// runEnsure runs one creation and publishes its outcome. A failure is not remembered:
// the next call tries again.
func (s *Session) runEnsure(ctx context.Context, c *ensureCall) {
	err := s.ensure(ctx)
	s.mu.Lock()
	if err == nil {
		s.ensured = true
		s.holdOpenLocked()
	}
	s.inflight = nil
	c.err = err
	s.mu.Unlock()
	close(c.done)
}

func (s *Session) ensure(ctx context.Context) error {
	if err := s.Client.CheckVersion(ctx); err != nil {
		if errors.Is(err, sbx.ErrTooOld) || errors.Is(err, sbx.ErrNotFound) || errors.Is(err, sbx.ErrSignedOut) {
			return err
		}
		// An sbx whose version answer we cannot read may still work: the calls say.
		s.logf("pi-sbx-backend: %v\n", err)
	} else if s.Client.Cloud {
		if err := s.Client.CheckCloud(ctx); err != nil {
			return err
		}
	}
	// The lease before the lookup: a creator tearing the sandbox down either sees it or
	// has finished, and then this session makes the sandbox again.
	s.takeLease(ctx)
	existing, err := s.Client.Lookup(ctx, s.Name)
	switch {
	case err == nil:
		if err := sbx.CheckHostFiles(s.HostFiles, existing.Mounts()); err != nil {
			return fmt.Errorf("sandbox %s: %w", s.Name, err)
		}
		if err := s.started(ctx, false); err != nil {
			return err
		}
		if s.Client.Cloud {
			s.startTTL(ctx, time.Now()) // its creation is not known: sbx says when it refuses
		}
		return nil
	case !errors.Is(err, sbx.ErrMissing):
		return fmt.Errorf("looking up sandbox %s: %w", s.Name, err)
	}
	workspaces, err := s.workspaces()
	if err != nil {
		return err
	}
	s.mu.Lock()
	// Even a create that fails or is interrupted may leave a sandbox behind: from here on
	// it is this session's to tear down.
	s.created = true
	arm := s.watchdog == nil && s.Owner > 0 && s.Teardown != TeardownNone
	s.mu.Unlock()
	if arm {
		// Armed before create: even a kill -9 of this process during the create must not
		// leave the sandbox running.
		w, err := StartWatchdog(s.Client, s.Owner, s.Name, s.watchdogMode(), 0, s.Owners.Leases(), s.Locker)
		if err != nil {
			s.logf("pi-sbx-backend: %v (the sandbox is torn down on orderly shutdown only)\n", err)
		}
		s.mu.Lock()
		s.watchdog = w
		s.mu.Unlock()
	}
	if s.Owners != nil {
		// The project's own owner record: GC removes a stopped pi-sbx-* sandbox only when
		// it proves the owner gone.
		if err := s.Owners.Record(s.Name, s.ownerPID(), s.Pinned, s.Workspace, time.Now()); err != nil {
			s.logf("pi-sbx-backend: %v (GC will keep this sandbox)\n", err)
		}
	}
	where := ""
	if s.Client.Cloud {
		where = "cloud "
	}
	s.logf("pi-sbx-backend: creating %ssandbox %s for %s (this takes a while the first time)…\n", where, s.Name, s.Workspace)
	start := time.Now()
	if err := s.Client.Create(ctx, s.Name, sbx.CreateOpts{Workspaces: workspaces, Clone: s.Clone, Resources: s.Resources, Cloud: s.Cloud, Progress: s.Progress}); err != nil {
		if errors.Is(err, sbx.ErrQuota) {
			// One line, what to do: sbx's own words add nothing to it.
			return fmt.Errorf("creating cloud sandbox %s: %w", s.Name, sbx.ErrQuota)
		}
		return fmt.Errorf("creating %ssandbox %s: %w", where, s.Name, err)
	}
	if s.Client.Cloud {
		s.startTTL(ctx, start)
	}
	if s.Created != nil {
		if err := s.Created(ctx, s.Name); err != nil {
			return fmt.Errorf("sandbox %s: %w", s.Name, err)
		}
	}
	if err := s.started(ctx, true); err != nil {
		return err
	}
	s.logf("pi-sbx-backend: sandbox %s ready in %.1fs\n", s.Name, time.Since(start).Seconds())
	return nil
}

func (s *Session) started(ctx context.Context, created bool) error {
	if s.Started == nil {
		return nil
	}
	if err := s.Started(ctx, s.Name, created); err != nil {
		return fmt.Errorf("preparing sandbox %s: %w", s.Name, err)
	}
	return nil
}

// watchdogMode is what the watchdog does once the owner is gone: a review sandbox whose
// work only Keep can save is stopped, never removed (GC saves and removes it later).
func (s *Session) watchdogMode() string {
	if s.Keep != nil && s.Teardown == TeardownRemove && !s.Force {
		return TeardownStop
	}
	return s.Teardown
}

// Close tears the sandbox down as DOCKER_SANDBOX_TEARDOWN says, if this session created
// it (or began to). A creation under way is stopped first. Teardown is tried a few
// times, since sbx may be briefly busy; once it succeeded the watchdog is disarmed.
func (s *Session) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.releaseLocked()
	if s.end != nil {
		s.end()
	}
	c := s.inflight
	s.mu.Unlock()
	if c != nil {
		select {
		case <-c.done:
		case <-ctx.Done():
		}
	}
	s.mu.Lock()
	created, w := s.created, s.watchdog
	s.mu.Unlock()
	if !created || s.Teardown == TeardownNone {
		s.dropLease()
		return nil
	}
	if leases := s.Owners.Leases(); leases != nil {
		// Decided and done under the lease lock: a process joining meanwhile waits, then
		// finds the sandbox gone and makes it again (or fails closed).
		unlock, err := leases.Lock(ctx, s.Name)
		if err != nil {
			s.logf("pi-sbx-backend: %v\n", err)
		} else {
			defer unlock()
		}
		others, err := leases.Others(s.Name, s.ownerPID())
		if err != nil {
			s.logf("pi-sbx-backend: %v\n", err)
		}
		s.dropLease()
		if len(others) > 0 {
			// Not ours alone: the watchdog tears it down once the last holder is gone.
			s.logf("pi-sbx-backend: sandbox %s is still in use by %s: left running for them\n", s.Name, Describe(others))
			return nil
		}
	}
	teardown := s.Teardown
	if teardown == TeardownRemove && s.Keep != nil {
		if err := s.Keep(ctx, s.Name); err != nil {
			if !s.Force {
				s.logf("pi-sbx-backend: keeping sandbox %s (stopped): %v\n", s.Name, err)
				teardown = TeardownStop
			} else {
				s.logf("pi-sbx-backend: removing sandbox %s although %v (DOCKER_SANDBOX_TEARDOWN_FORCE)\n", s.Name, err)
			}
		}
	}
	var err error
	for try := 0; try < 3; try++ {
		if try > 0 && !pause(ctx, time.Second) {
			err = errors.Join(err, ctx.Err())
			break
		}
		if teardown == TeardownStop {
			err = s.Client.Stop(ctx, s.Name)
		} else {
			err = s.Client.Rm(ctx, s.Name)
		}
		if err == nil || errors.Is(err, sbx.ErrMissing) {
			if w != nil {
				// Done here: it must not tear down again when this process exits.
				if err := w.Stop(); err != nil {
					s.logf("pi-sbx-backend: %v\n", err)
				}
				s.mu.Lock()
				s.watchdog = nil
				s.mu.Unlock()
			}
			if s.Owners != nil && teardown == TeardownRemove {
				s.Owners.Remove(s.Name) // best effort: a stale record only keeps GC away
			}
			if s.ReadOnly && teardown == TeardownRemove {
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

// takeLease records that this session uses the sandbox (lease.go). Without a lease the
// session still works; another holder's teardown just cannot see it.
func (s *Session) takeLease(ctx context.Context) {
	leases := s.Owners.Leases()
	if leases == nil {
		return
	}
	unlock, err := leases.Lock(ctx, s.Name)
	if err != nil {
		s.logf("pi-sbx-backend: %v\n", err)
		return
	}
	defer unlock()
	if err := leases.Take(s.Name, s.ownerPID(), s.Role, time.Now()); err != nil {
		s.logf("pi-sbx-backend: %v (another session on this sandbox may remove it while this one uses it)\n", err)
	}
}

// dropLease ends this session's lease, if it took one.
func (s *Session) dropLease() {
	if leases := s.Owners.Leases(); leases != nil {
		if err := leases.Drop(s.Name, s.ownerPID()); err != nil {
			s.logf("pi-sbx-backend: %v\n", err)
		}
	}
}

// workspaces returns the mounts of a new sandbox: the workspace as primary, or in
// read-only mode a scratch primary and the workspace read-only.
func (s *Session) workspaces() ([]string, error) {
	if s.Client.Cloud {
		return nil, nil // nothing of the host is mounted in the cloud
	}
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

func (s *SessionOptions) scratch() (string, error) {
	if s.Home == "" || !filepath.IsAbs(s.Home) {
		return "", fmt.Errorf("DOCKER_SANDBOX_WORKSPACE_MODE=%s needs HOME for its scratch workspace", s.Mode)
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

// Mounts returns the host directories the session's sandbox mounts, all of which its
// code can write: the workspace, and in read-only mode the scratch primary too. The
// project mounted `:ro` counts as well: sbx has had a way to remount it read/write from
// inside (SBX#556), and the sandbox user has sudo, so read-only is not trusted to keep
// the host's executables safe.
func (s *SessionOptions) Mounts() []string {
	mounts := []string{s.Workspace}
	if s.ReadOnly {
		if dir, err := s.scratch(); err == nil {
			mounts = append(mounts, dir)
		}
	}
	return mounts
}
