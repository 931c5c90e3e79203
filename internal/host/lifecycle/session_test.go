package lifecycle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

func TestSessionLifecycle(t *testing.T) {
	tests := []struct {
		name      string
		opts      SessionOptions
		exists    bool
		wantCalls []string // after the two Ensure calls and Close; NAME is the session name
	}{
		{"session name, created and removed", SessionOptions{}, false,
			[]string{"ls --json", "watchdog 77 2 sbx rm NAME", "create --name NAME --pull missing shell /ws", "rm --force NAME"}},
		{"teardown stop", SessionOptions{Teardown: TeardownStop}, false,
			[]string{"ls --json", "watchdog 77 2 sbx stop NAME", "create --name NAME --pull missing shell /ws", "stop NAME"}},
		{"teardown none", SessionOptions{Teardown: TeardownNone}, false,
			[]string{"ls --json", "create --name NAME --pull missing shell /ws"}},
		{"pinned existing is left alone", SessionOptions{Name: "mybox", Pinned: true}, true, []string{"ls --json"}},
		{"pinned created is never removed", SessionOptions{Name: "mybox", Pinned: true, Teardown: TeardownRemove}, false,
			[]string{"ls --json", "create --name NAME --pull missing shell /ws"}},
		{"pinned created may be stopped", SessionOptions{Name: "mybox", Pinned: true, Teardown: TeardownStop}, false,
			[]string{"ls --json", "watchdog 77 2 sbx stop NAME", "create --name NAME --pull missing shell /ws", "stop NAME"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var name string
			f := &fakeRunner{answer: func(_ context.Context, c sbx.Cmd) (int, string, string) {
				if c.Args[0] == "ls" && tc.exists {
					return 0, `{"sandboxes":[{"name":"` + name + `","status":"running"}]}`, ""
				}
				if c.Args[0] == "ls" {
					return 0, `{"sandboxes":[]}`, ""
				}
				return 0, "created\n", ""
			}}
			var progress bytes.Buffer
			o := tc.opts
			o.Owner, o.Workspace, o.Progress = 77, "/ws", &progress
			s, err := NewSession(&sbx.Client{Bin: "sbx", Runner: f}, o)
			require.NoError(t, err)
			name = s.Name
			for i := 0; i < 2; i++ {
				got, err := s.Ensure(context.Background())
				require.NoError(t, err)
				assert.Equal(t, name, got)
			}
			require.NoError(t, s.Close(context.Background()))
			var want []string
			for _, w := range tc.wantCalls {
				want = append(want, strings.ReplaceAll(w, "NAME", name))
			}
			assert.Equal(t, want, f.argvs())
			if !tc.exists {
				assert.Contains(t, progress.String(), "creating sandbox "+name)
			}
		})
	}
}

func TestNewSessionRejectsBadInput(t *testing.T) {
	for _, o := range []SessionOptions{
		{Name: "bad_name", Pinned: true},
		{Teardown: "explode"},
		{Mode: "clone"},
		{Resources: sbx.Resources{Memory: "100m"}},
	} {
		o.Owner, o.Workspace = 1, "/ws"
		_, err := NewSession(&sbx.Client{}, o)
		assert.Error(t, err, "%+v", o)
		if o.Pinned {
			assert.ErrorIs(t, err, sbx.ErrBadName)
		}
	}
}

// TestWatchdogTearsDownAfterOwnerDies runs the real watchdog script against a stand-in
// sbx that records its arguments, with an owner process the test kills.
func TestWatchdogTearsDownAfterOwnerDies(t *testing.T) {
	for _, mode := range []string{TeardownRemove, TeardownStop} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			record := filepath.Join(dir, "calls")
			fakeSbx := filepath.Join(dir, "sbx")
			require.NoError(t, os.WriteFile(fakeSbx, []byte("#!/bin/sh\necho \"$@\" ${DOCKER_HOST:-no-docker-host} >> "+record+"\n"), 0o755))
			owner := exec.Command("sleep", "1000")
			require.NoError(t, owner.Start())
			c := sbx.NewClient(fakeSbx, os.Getenv("PATH"), sbx.EnvPolicy{}.HostEnv([]string{"PATH=" + os.Getenv("PATH"), "DOCKER_HOST=unix:///decoy"}), sbx.ExecRunner{})
			w, err := StartWatchdog(c, owner.Process.Pid, "box-1", mode, 10*time.Millisecond, nil, "")
			require.NoError(t, err)
			defer w.Stop()
			_, err = os.Stat(record)
			require.True(t, os.IsNotExist(err), "nothing happens while the owner lives")
			require.NoError(t, owner.Process.Kill())
			owner.Wait()
			want := "rm --force box-1 no-docker-host\n"
			if mode == TeardownStop {
				want = "stop box-1 no-docker-host\n"
			}
			require.Eventually(t, func() bool { b, _ := os.ReadFile(record); return string(b) == want },
				10*time.Second, 10*time.Millisecond)
		})
	}
}

func TestSessionReadOnlyWorkspace(t *testing.T) {
	home := t.TempDir()
	f := &fakeRunner{answer: func(_ context.Context, c sbx.Cmd) (int, string, string) {
		if c.Args[0] == "ls" {
			return 0, `{"sandboxes":[]}`, ""
		}
		return 0, "", ""
	}}
	s, err := NewSession(&sbx.Client{Bin: "sbx", Runner: f}, SessionOptions{Mode: ModeRO, Home: home, Workspace: "/ws"})
	require.NoError(t, err)
	_, err = s.Ensure(context.Background())
	require.NoError(t, err)
	scratch := filepath.Join(home, ".sbx-prime-"+s.Name)
	assert.DirExists(t, scratch)
	require.NoError(t, s.Close(context.Background()))
	assert.Equal(t, []string{"ls --json", "create --name " + s.Name + " --pull missing shell " + scratch + " /ws:ro", "rm --force " + s.Name}, f.argvs())
	assert.NoDirExists(t, scratch, "the scratch primary goes with its sandbox")
}

func TestFailedTeardownLeavesTheWatchdogArmed(t *testing.T) {
	for _, rmFails := range []bool{false, true} {
		t.Run(fmt.Sprintf("rm fails %v", rmFails), func(t *testing.T) {
			f := &fakeRunner{answer: func(_ context.Context, c sbx.Cmd) (int, string, string) {
				switch {
				case c.Args[0] == "ls":
					return 0, `{"sandboxes":[]}`, ""
				case c.Args[0] == "rm" && rmFails:
					return 1, "", "ERROR: daemon busy"
				}
				return 0, "", ""
			}}
			s, err := NewSession(&sbx.Client{Bin: "sbx", Runner: f}, SessionOptions{Owner: 77, Workspace: "/ws"})
			require.NoError(t, err)
			_, err = s.Ensure(context.Background())
			require.NoError(t, err)
			require.Equal(t, "/bin/sh", f.bins[1], "armed before sbx create")
			watchdog := f.ctxs[1]
			err = s.Close(context.Background())
			if rmFails {
				assert.ErrorIs(t, err, sbx.ErrFailed)
				assert.NoError(t, watchdog.Err(), "the watchdog will try again after this process exits")
			} else {
				assert.NoError(t, err)
				assert.Error(t, watchdog.Err(), "the watchdog is stopped after a clean teardown")
			}
		})
	}
}

// TestWatchdogStopWaitsUntilGone: after an orderly teardown the watchdog is disarmed
// before Stop returns, so an owner exiting right after cannot leave it behind to run
// sbx rm again and again.
func TestWatchdogStopWaitsUntilGone(t *testing.T) {
	r := &slowWatchdogRunner{}
	w, err := StartWatchdog(&sbx.Client{Bin: "sbx", Runner: r}, os.Getpid(), "box", TeardownRemove, 0, nil, "")
	require.NoError(t, err)
	require.NoError(t, w.Stop())
	assert.True(t, r.exited.Load(), "the watchdog process is gone when Stop returns")
}

// TestWatchdogStoppedNeverTearsDown runs the real watchdog script: stopped, it does
// nothing once its owner dies.
func TestWatchdogStoppedNeverTearsDown(t *testing.T) {
	dir := t.TempDir()
	record := filepath.Join(dir, "calls")
	fakeSbx := filepath.Join(dir, "sbx")
	require.NoError(t, os.WriteFile(fakeSbx, []byte("#!/bin/sh\necho \"$@\" >> "+record+"\n"), 0o755))
	owner := exec.Command("sleep", "1000")
	require.NoError(t, owner.Start())
	c := &sbx.Client{Bin: fakeSbx, Runner: sbx.ExecRunner{}, Env: []string{"PATH=" + os.Getenv("PATH")}}
	w, err := StartWatchdog(c, owner.Process.Pid, "box", TeardownRemove, 50*time.Millisecond, nil, "")
	require.NoError(t, err)
	require.NoError(t, w.Stop())
	require.NoError(t, owner.Process.Kill())
	owner.Wait()
	time.Sleep(500 * time.Millisecond) // ten polls
	assert.NoFileExists(t, record, "a stopped watchdog ran sbx")
}

// TestEnsureOutlivesACancelledCall: a call cancelled while sbx create runs stops waiting,
// but the creation goes on (armed with its watchdog first); the next call waits for the
// same creation instead of starting another or hanging, and the sandbox is torn down
// with the session.
func TestEnsureOutlivesACancelledCall(t *testing.T) {
	f := newSlowCreate()
	s, err := NewSession(&sbx.Client{Bin: "sbx", Runner: f}, SessionOptions{Owner: 77, Workspace: "/ws"})
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		require.Eventually(t, func() bool { return f.made.Load() }, 5*time.Second, time.Millisecond)
		cancel()
	}()
	_, err = s.Ensure(ctx)
	require.ErrorIs(t, err, context.Canceled, "the cancelled caller stops waiting")
	assert.Equal(t, []string{"ls --json", "watchdog 77 2 sbx rm " + s.Name, "create --name " + s.Name + " --pull missing shell /ws"}, f.argvs(),
		"the watchdog is armed before sbx create")

	next := make(chan error, 1)
	go func() { _, err := s.Ensure(context.Background()); next <- err }()
	select {
	case err := <-next:
		t.Fatalf("the next call did not wait for the creation under way: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(f.release)
	require.NoError(t, <-next)
	require.NoError(t, s.Close(context.Background()))
	assert.Equal(t, []string{"ls --json", "watchdog 77 2 sbx rm " + s.Name, "create --name " + s.Name + " --pull missing shell /ws", "rm --force " + s.Name}, f.argvs(),
		"one create, and the sandbox removed with the session")
}

// TestCloseDuringCreationTearsDown: a session closed while its sandbox is being created
// stops the creation and removes whatever it left.
func TestCloseDuringCreationTearsDown(t *testing.T) {
	f := newSlowCreate()
	s, err := NewSession(&sbx.Client{Bin: "sbx", Runner: f}, SessionOptions{Owner: 77, Workspace: "/ws"})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		require.Eventually(t, func() bool { return f.made.Load() }, 5*time.Second, time.Millisecond)
		cancel()
	}()
	_, err = s.Ensure(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, s.Close(context.Background()))
	argv := f.argvs()
	require.NotEmpty(t, argv)
	assert.Equal(t, "rm --force "+s.Name, argv[len(argv)-1])
	f.mu.Lock()
	createCtx := f.ctxs[2]
	f.mu.Unlock()
	assert.Error(t, createCtx.Err(), "the creation was stopped")
	_, err = s.Ensure(context.Background())
	assert.Error(t, err, "a closed session creates nothing")
}

func TestSessionName(t *testing.T) {
	for i := 0; i < 20; i++ {
		n, err := SessionName(4242, nil)
		require.NoError(t, err)
		assert.NoError(t, sbx.ValidateName(n))
		assert.True(t, strings.HasPrefix(n, "pi-sbx-4242-"), n)
	}
}

// slowProcess is a watchdog stand-in that, like a real process, is gone only some time
// after its context ends (the kill happens on another goroutine).
type slowProcess struct {
	ctx    context.Context
	exited *atomic.Bool
}

func (p slowProcess) Wait() (int, error) {
	<-p.ctx.Done()
	time.Sleep(50 * time.Millisecond)
	p.exited.Store(true)
	return -1, errors.New("signal: killed")
}

type slowWatchdogRunner struct{ exited atomic.Bool }

func (r *slowWatchdogRunner) Start(ctx context.Context, _ string, _ sbx.Cmd) (sbx.Process, error) {
	return slowProcess{ctx, &r.exited}, nil
}

// slowCreate answers ls (no sandbox), blocks create until release is
// closed or its context ends, and records the context every command ran with.
type slowCreate struct {
	fakeRunner
	release chan struct{}
	made    atomic.Bool
}

func newSlowCreate() *slowCreate {
	s := &slowCreate{release: make(chan struct{})}
	s.answer = func(ctx context.Context, c sbx.Cmd) (int, string, string) {
		switch c.Args[0] {
		case "ls":
			return 0, `{"sandboxes":[]}`, ""
		case "create":
			s.made.Store(true) // sbx has begun making it
			select {
			case <-s.release:
				return 0, "", ""
			case <-ctx.Done():
				return -1, "", ""
			}
		}
		return 0, "", ""
	}
	return s
}
