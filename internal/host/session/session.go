// Package session is the host's side of one session: the sandbox it works in (created
// on first need, torn down at its end), the sbx client that reaches it, the working
// directory in it and the variables forwarded into it, all from the settings read
// once; the files it runs on the host, checked against what the sandbox can write; and
// serve's status method, which warms the sandbox up.
package session

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/lifecycle"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/netpolicy"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/keep"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/settings"
)

// Session is what serve, shell, verify and gc share: the session's sandbox (created on
// first need), the sbx client that reaches it, the working directory in it and the
// variables forwarded into it. Open makes it whole; nothing is set on it afterwards.
type Session struct {
	Client *sbx.Client
	*lifecycle.Session
	Workspace string   // primary workspace, absolute
	Cwd       string   // working directory in the VM: the workspace or --cwd, at its host path
	VMEnv     []string // KEY=VALUE forwarded as -e (PI_*, the allowlist)
	Reuse     bool     // DOCKER_SANDBOX_REUSE: the project's sandbox, kept
	// Settings are the ones the session was opened with (DOCKER_SANDBOX pinned to the
	// project's sandbox when Reuse).
	Settings settings.Settings
	// Preflight, when set, reports the cheap host checks serve ran at start (doctor's
	// quick subset): an error is the first failure and its fix, as a status line shows
	// it ("sandbox: sbx is signed out — run sbx login"). pi_sbx_status answers with it.
	Preflight func(ctx context.Context) error
	// SaveWork saves a review sandbox's work before GC removes it (keep.Keeper.Save);
	// nil without a state directory.
	SaveWork func(ctx context.Context, name string) error
	// KeepWork is SaveWork for GC without --force (keep.Keeper.SaveStopped).
	KeepWork func(ctx context.Context, name string) error
	// UsedCloud says whether the review store holds a cloud sandbox's record (GC then
	// sweeps the cloud too); nil without a state directory.
	UsedCloud func() bool
}

// Options say where a session works and how it reaches sbx.
type Options struct {
	Settings  settings.Settings // DOCKER_SANDBOX*, PI_SBX_BIN, the env policy: read once
	Pid       int               // the owner: the watchdog removes the sandbox when it dies
	Workspace string            // an existing directory, absolute
	Cwd       string            // absolute; "" is the workspace
	Exe       string            // this program: checked, with the agents, as a host file
	Progress  io.Writer         // sandbox-creation progress (stderr)
	Runner    sbx.Runner        // runs the sbx program (sbx.ExecRunner{})
	// Role names what holds the sandbox (serve, shell), for messages about who keeps it.
	Role string
	// KeepAlive holds a session open in the sandbox so that sbx's auto-stop does not end
	// it between calls (serve).
	KeepAlive bool
	// Preflight, when set, starts the quick host checks with the session's client and
	// returns what reports them (Session.Preflight).
	Preflight func(ctx context.Context, c *sbx.Client) func(context.Context) error
	// Context bounds the preflight checks Open starts.
	Context context.Context
}

// Open builds the session o describes and checks, before anything runs, that no file it
// would run on the host is one the sandbox can write.
func Open(o Options) (*Session, error) {
	ws, dir := o.Workspace, o.Cwd
	if dir == "" {
		dir = ws
	}
	st, reuse := o.Settings.ForProject(ws)
	client := st.Client(o.Runner)
	if st.Cloud {
		// Every call of this session, its watchdog's too, reaches Docker's cloud.
		client = client.InCloud()
	}
	so := lifecycle.SessionOptions{
		Name: st.Sandbox, Pinned: st.Pinned(), Workspace: ws, Teardown: st.Teardown, Progress: o.Progress,
		Owner: o.Pid, Home: st.Home, Mode: st.Mode, Force: st.TeardownForce, Resources: st.Resources,
		KeepAlive: o.KeepAlive, Role: o.Role, Cloud: sbx.CloudOpts{Size: st.CloudSize}, TTLEvery: st.CloudExtend,
	}
	if !so.Pinned {
		name, err := lifecycle.SessionName(o.Pid, nil)
		if err != nil {
			return nil, err
		}
		so.Name = name
	}
	so.ReadOnly = so.Mode == lifecycle.ModeRO
	// Nothing the sandbox can write may ever run on the host: refuse before starting
	// anything, and pin the sbx program to the file that was checked.
	mounts := so.Mounts()
	keeper, keepErr := keep.New(st.StateHome, st.Environ, client)
	if so.Mode == lifecycle.ModeReview {
		if keepErr != nil {
			return nil, keepErr
		}
		if len(st.CloudShip) > 0 { // only with st.Cloud (settings)
			if err := keep.CheckShip(ws, st.CloudShip); err != nil {
				return nil, fmt.Errorf("PI_SBX_CLOUD_SHIP: %w", err)
			}
		}
		root := reviewMode(&so, keeper, st.Cloud, st.CloudShip)
		mounts = append(so.Mounts(), root) // clone mode's source is mounted too
		if st.Cloud {
			mounts = nil // nothing of the host is mounted in the cloud
		}
	}
	files, err := HostFiles(client, o.Exe)
	if err != nil {
		return nil, err
	}
	if err := sbx.CheckHostFiles(files, mounts); err != nil {
		return nil, err
	}
	so.HostFiles = files
	// The watchdog runs exactly the file checked above, whatever a symlink on the way
	// points to later.
	if real, err := filepath.EvalSymlinks(o.Exe); err == nil {
		so.Locker = real
	}
	if owners, err := st.Owners(); err == nil {
		so.Owners = owners // GC collects only what an owner record proves abandoned
	}
	// The network stance (PI_SBX_NETWORK) and the project's remembered rules hold from
	// the sandbox's creation.
	stateDir, _ := netpolicy.StateDir(st.StateHome)
	rules := &netpolicy.Rules{Sbx: client, StateDir: stateDir}
	so.Created = func(ctx context.Context, name string) error {
		return rules.AtCreate(ctx, name, ws, st.Network)
	}
	session, err := lifecycle.NewSession(client, so)
	if err != nil {
		return nil, err
	}
	s := &Session{Client: client, Session: session, Workspace: ws, Cwd: dir,
		VMEnv: st.VMEnv(), Reuse: reuse, Settings: st}
	if keeper != nil {
		s.SaveWork, s.KeepWork, s.UsedCloud = keeper.Save, keeper.SaveStopped, keeper.Store.HasCloud
	}
	if o.Preflight != nil {
		ctx := o.Context
		if ctx == nil {
			ctx = context.Background()
		}
		s.Preflight = o.Preflight(ctx, client)
	}
	return s, nil
}

// End removes (or stops) a sandbox this session created, as DOCKER_SANDBOX_TEARDOWN
// says; it gets a minute of its own even when ctx has ended (a signal).
func (s *Session) End(ctx context.Context) error {
	down, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	return s.Close(down)
}

// HostFiles are the files this process runs on the host or installs into the VM: the sbx
// program (resolved and pinned by ResolveBin), the watchdog's shell, this executable exe
// (the watchdog's locker; the agent on a linux host of the VM's architecture) and the
// linux agents beside it.
func HostFiles(c *sbx.Client, exe string) ([]sbx.HostFile, error) {
	files := append(c.ResolveBin(), sbx.HostFile{Role: "the watchdog's shell", Path: sbx.WatchdogShell})
	files = append(files, sbx.HostFile{Role: "this program (" + prog + ", the watchdog's locker, also the agent it installs)", Path: exe})
	// The agents beside it; one that does not exist is in this executable's directory,
	// which is checked with it.
	for _, arch := range []string{"amd64", "arm64"} {
		p := filepath.Join(filepath.Dir(exe), prog+"-linux-"+arch)
		if _, err := os.Lstat(p); err == nil {
			files = append(files, sbx.HostFile{Role: "the agent binary", Path: p})
		}
	}
	return files, nil
}

// prog is the program's name, as its agents beside it are named.
const prog = "pi-sbx-backend"

// Lost reports a sandbox gone from outside (lifecycle.Session.Lost) and whether the next call
// makes it again: not one the user pinned with DOCKER_SANDBOX (warm re-use aside), which
// was theirs to remove; calls then fail closed.
func (s *Session) Lost() bool {
	if s.Pinned && !s.Reuse {
		return false
	}
	return s.Session.Lost()
}
