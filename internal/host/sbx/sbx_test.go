package sbx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHostEnv(t *testing.T) {
	host := []string{
		"HOME=/root", "PATH=/bin", "TERM=xterm", "SECRET=s", "PI_X=1",
		"DOCKER_HOST=unix:///decoy.sock", "DOCKER_CONTEXT=x", "COMPOSE_FILE=c.yml", "MYVAR=v",
	}
	tests := []struct {
		name   string
		policy EnvPolicy
		want   []string
	}{
		{"default keeps only the basics", EnvPolicy{}, []string{"HOME=/root", "PATH=/bin", "TERM=xterm"}},
		{"allowlist adds names", EnvPolicy{Allow: []string{"MYVAR"}},
			[]string{"HOME=/root", "PATH=/bin", "TERM=xterm", "MYVAR=v"}},
		{"passthrough keeps all but docker/compose", EnvPolicy{Passthrough: true},
			[]string{"HOME=/root", "PATH=/bin", "TERM=xterm", "SECRET=s", "PI_X=1", "MYVAR=v"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.policy.HostEnv(host))
		})
	}
}

func TestVMEnv(t *testing.T) {
	host := []string{"HOME=/root", "PATH=/bin", "PI_MODEL=m", "PI_SBX_BIN=/host/sbx", "DOCKER_HOST=x", "MYVAR=v", "OTHER=o", "PWD=/w"}
	tests := []struct {
		name   string
		policy EnvPolicy
		want   []string
	}{
		{"PI_ only", EnvPolicy{}, []string{"PI_MODEL=m"}},
		{"allowlist", EnvPolicy{Allow: []string{"MYVAR"}}, []string{"PI_MODEL=m", "MYVAR=v"}},
		{"passthrough drops host-describing and docker", EnvPolicy{Passthrough: true},
			[]string{"PI_MODEL=m", "MYVAR=v", "OTHER=o"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.policy.VMEnv(host))
		})
	}
}

func TestValidateName(t *testing.T) {
	for name, ok := range map[string]bool{
		"ab": true, "pi-sbx-12-abc": true, "a.b-c9": true, strings.Repeat("a", 63): true,
		"a": false, strings.Repeat("a", 64): false, "-ab": false, "ab-": false, "a_b": false,
		"a+b": false, "default": false, "a b": false, "ab\n": false, "": false,
	} {
		err := ValidateName(name)
		assert.Equal(t, ok, err == nil, "%q: %v", name, err)
	}
	for i := 0; i < 20; i++ {
		n, err := SessionName(4242, nil)
		require.NoError(t, err)
		assert.NoError(t, ValidateName(n))
		assert.True(t, strings.HasPrefix(n, "pi-sbx-4242-"), n)
	}
}

func TestExecArgs(t *testing.T) {
	got := ExecArgs("box", []string{"sh", "-c", "x"}, ExecOpts{Interactive: true, TTY: true, Env: []string{"A=1", "B=2"}, Workdir: "/w"})
	assert.Equal(t, []string{"exec", "-i", "-t", "-e", "A", "-e", "B", "-w", "/w", "box", "--", "sh", "-c", "x"}, got)
}

// TestExecPassesValuesOutsideArgv: a forwarded variable's value is never in sbx's argv
// (world-readable in /proc/*/cmdline) but in its environment, for `-e NAME` to read, for
// Exec and for the long-lived StartExec alike; malformed or docker variables are refused.
func TestExecPassesValuesOutsideArgv(t *testing.T) {
	const secret = "planted-s3cret-value"
	f := &fakeRunner{answer: func(context.Context, Cmd) (int, string, string) { return 0, "", "" }}
	c := NewClient("", "/bin", EnvPolicy{}.HostEnv([]string{"PATH=/bin", "TOKEN=host-old"}), f)
	opts := ExecOpts{Env: []string{"PI_KEY=" + secret, "TOKEN=" + secret}}
	_, err := c.Exec(context.Background(), "box", []string{"true"}, opts)
	require.NoError(t, err)
	st, err := c.StartExec(context.Background(), "box", []string{"true"}, opts)
	require.NoError(t, err)
	require.NoError(t, st.Wait())
	require.Len(t, f.calls, 2)
	for _, call := range f.calls {
		assert.NotContains(t, strings.Join(call.Args, "\x00"), secret)
		assert.Contains(t, strings.Join(call.Args, " "), "-e PI_KEY -e TOKEN")
		assert.Equal(t, []string{"PATH=/bin", "PI_KEY=" + secret, "TOKEN=" + secret}, call.Env)
	}
	assert.Equal(t, []string{"PATH=/bin"}, c.Env, "the client's own environment is unchanged")

	for _, bad := range []string{"NOVALUE", "=v", "BAD-NAME=v", "DOCKER_HOST=tcp://x", "COMPOSE_FILE=x"} {
		_, err := c.Exec(context.Background(), "box", []string{"true"}, ExecOpts{Env: []string{bad}})
		assert.Error(t, err, bad)
		_, err = c.StartExec(context.Background(), "box", []string{"true"}, ExecOpts{Env: []string{bad}})
		assert.Error(t, err, bad)
	}
	assert.Len(t, f.calls, 2, "nothing started for a refused variable")
}

func TestExecClassification(t *testing.T) {
	tests := []struct {
		name     string
		code     int
		stderr   string
		wantErr  error
		wantCode int
	}{
		{"success", 0, "", nil, 0},
		{"command exit 1", 1, "grep: nothing", nil, 1},
		{"command exit 7", 7, "", nil, 7},
		{"missing sandbox", 1, "ERROR: no sandbox named 'box'", ErrMissing, 1},
		{"a command that prints those words, exit 2", 2, "no sandbox named x", nil, 2},
		{"runtime 500", 1, "ERROR: failed to start sandbox: start runtime: request failed: 500 Internal Server Error", ErrRuntime, 1},
		{"runtime 409", 1, "start runtime: request failed: 409 Conflict: port is already allocated", ErrRuntime, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeRunner{answer: func(context.Context, Cmd) (int, string, string) { return tc.code, "out", tc.stderr }}
			c := &Client{Bin: "sbx", Runner: f, RetryDelays: []time.Duration{}}
			res, err := c.Exec(context.Background(), "box", []string{"true"}, ExecOpts{})
			if tc.wantErr == nil {
				require.NoError(t, err)
				assert.Equal(t, tc.wantCode, res.ExitCode)
				assert.Equal(t, "out", string(res.Stdout))
				return
			}
			require.ErrorIs(t, err, tc.wantErr)
			var se *Error
			require.ErrorAs(t, err, &se)
			assert.Equal(t, "box", se.Sandbox)
		})
	}
}

func TestRetryOnlyWhenNeverRan(t *testing.T) {
	const runtimeFail = "start runtime: request failed: 503 Service Unavailable"
	tests := []struct {
		name      string
		stderrs   []string // per attempt
		stdin     func() io.Reader
		wantCalls int
		wantErr   error
	}{
		{"runtime then success", []string{runtimeFail, ""}, nil, 2, nil},
		{"runtime every time gives up", []string{runtimeFail, runtimeFail, runtimeFail, runtimeFail}, nil, 3, ErrRuntime},
		{"command failure is not retried", []string{"boom"}, nil, 1, nil},
		{"seekable stdin is retried", []string{runtimeFail, ""}, func() io.Reader { return strings.NewReader("x") }, 2, nil},
		{"stream stdin is not retried", []string{runtimeFail, ""}, func() io.Reader { return bytes.NewBufferString("x") }, 1, ErrRuntime},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			f := &fakeRunner{answer: func(context.Context, Cmd) (int, string, string) {
				s := tc.stderrs[n]
				n++
				if s == "" {
					return 0, "", ""
				}
				return 1, "", s
			}}
			c := &Client{Bin: "sbx", Runner: f, RetryDelays: []time.Duration{0, 0}}
			o := ExecOpts{}
			if tc.stdin != nil {
				o.Stdin = tc.stdin()
			}
			_, err := c.Exec(context.Background(), "box", []string{"true"}, o)
			assert.Equal(t, tc.wantCalls, n)
			if tc.wantErr == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tc.wantErr)
			}
		})
	}
}

// blockingRunner's processes run until their context ends.
type blockingRunner struct{}

func (blockingRunner) Start(ctx context.Context, _ string, _ Cmd) (Process, error) {
	return ctxProcess{ctx}, nil
}

type ctxProcess struct{ ctx context.Context }

func (p ctxProcess) Wait() (int, error) { <-p.ctx.Done(); return -1, errors.New("signal: killed") }

func TestTimeoutAndCancel(t *testing.T) {
	c := &Client{Bin: "sbx", Runner: blockingRunner{}, Timeout: 20 * time.Millisecond}
	_, err := c.Exec(context.Background(), "box", []string{"sleep", "1000"}, ExecOpts{})
	assert.ErrorIs(t, err, ErrTimeout)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Ls(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, ErrTimeout)
}

func TestLs(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		want    []Sandbox
		wantErr bool
	}{
		{"object form", `{"sandboxes":[{"name":"a1","status":"running"},{"name":"b2","status":"stopped"}]}`,
			[]Sandbox{{Name: "a1", Status: "running"}, {Name: "b2", Status: "stopped"}}, false},
		{"array form", `[{"name":"a1","status":"running"}]`, []Sandbox{{Name: "a1", Status: "running"}}, false},
		{"empty", "", nil, false},
		{"invalid name", `{"sandboxes":[{"name":"../../etc","status":"running"}]}`, nil, true},
		{"not json", `SANDBOX AGENT`, nil, true},
		{"too large", `{"sandboxes":[` + strings.Repeat(" ", maxLsOutput) + `]}`, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeRunner{answer: func(context.Context, Cmd) (int, string, string) { return 0, tc.out, "" }}
			c := &Client{Bin: "sbx", Runner: f}
			got, err := c.Ls(context.Background())
			if tc.wantErr {
				assert.ErrorIs(t, err, ErrOutput)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, []string{"ls --json"}, f.argvs())
		})
	}
}

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
			f := &fakeRunner{answer: func(_ context.Context, c Cmd) (int, string, string) {
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
			s, err := NewSession(&Client{Bin: "sbx", Runner: f}, o)
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
		{Resources: Resources{Memory: "100m"}},
	} {
		o.Owner, o.Workspace = 1, "/ws"
		_, err := NewSession(&Client{}, o)
		assert.Error(t, err, "%+v", o)
		if o.Pinned {
			assert.ErrorIs(t, err, ErrBadName)
		}
	}
}

func TestChildEnvIsScrubbed(t *testing.T) {
	environ := []string{"PATH=/bin", "DOCKER_HOST=unix:///decoy", "COMPOSE_PROJECT_NAME=x", "PI_SBX_BIN=/opt/sbxsim", "SECRET=1"}
	f := &fakeRunner{answer: func(context.Context, Cmd) (int, string, string) { return 0, "", "" }}
	c := NewClient("/opt/sbxsim", "/bin", EnvPolicy{}.HostEnv(environ), f)
	assert.Equal(t, "/opt/sbxsim", c.Bin)
	_, err := c.Exec(context.Background(), "box", []string{"true"}, ExecOpts{})
	require.NoError(t, err)
	require.NoError(t, c.Rm(context.Background(), "box"))
	for _, call := range f.calls {
		assert.Equal(t, []string{"PATH=/bin"}, call.Env)
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
			c := NewClient(fakeSbx, os.Getenv("PATH"), EnvPolicy{}.HostEnv([]string{"PATH=" + os.Getenv("PATH"), "DOCKER_HOST=unix:///decoy"}), ExecRunner{})
			w, err := c.StartWatchdog(owner.Process.Pid, "box-1", mode, 10*time.Millisecond, nil, "")
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

func TestTypedCallArgs(t *testing.T) {
	tests := []struct {
		name string
		do   func(c *Client) error
		want string // argv; "" when the call must be refused before running sbx
	}{
		{"stop", func(c *Client) error { return c.Stop(context.Background(), "box") }, "stop box"},
		{"rm", func(c *Client) error { return c.Rm(context.Background(), "box") }, "rm --force box"},
		{"rm bad name", func(c *Client) error { return c.Rm(context.Background(), "-rf") }, ""},
		{"ports list", func(c *Client) error { _, err := c.Ports(context.Background(), "box"); return err }, "ports box"},
		{"ports publish", func(c *Client) error {
			_, err := c.Ports(context.Background(), "box", "8080:3000", "5000/udp")
			return err
		},
			"ports box --publish 8080:3000 --publish 5000/udp"},
		{"ports flag injection", func(c *Client) error { _, err := c.Ports(context.Background(), "box", "--all"); return err }, ""},
		{"cp", func(c *Client) error { return c.Cp(context.Background(), "/host/f", "box:/tmp/f") }, "cp /host/f box:/tmp/f"},
		{"cp flag injection", func(c *Client) error { return c.Cp(context.Background(), "-L", "box:/x") }, ""},
		{"create", func(c *Client) error {
			return c.Create(context.Background(), "box", CreateOpts{Workspaces: []string{"/w", "/data:ro"}, Quiet: true})
		}, "create --name box -q --pull missing shell /w /data:ro"},
		{"create without workspace", func(c *Client) error { return c.Create(context.Background(), "box", CreateOpts{}) }, ""},
		{"exec empty argv", func(c *Client) error { _, err := c.Exec(context.Background(), "box", nil, ExecOpts{}); return err }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeRunner{answer: func(context.Context, Cmd) (int, string, string) { return 0, "", "" }}
			err := tc.do(&Client{Bin: "sbx", Runner: f})
			if tc.want == "" {
				assert.Error(t, err)
				assert.Empty(t, f.argvs(), "refused before running sbx")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []string{tc.want}, f.argvs())
		})
	}
}

func TestNonExecFailures(t *testing.T) {
	tests := []struct {
		stderr string
		want   error
	}{
		{"ERROR: no sandbox named 'box'", ErrMissing},
		{"ERROR: something else", ErrFailed},
	}
	for _, tc := range tests {
		f := &fakeRunner{answer: func(context.Context, Cmd) (int, string, string) { return 1, "", tc.stderr }}
		err := (&Client{Bin: "sbx", Runner: f}).Stop(context.Background(), "box")
		assert.ErrorIs(t, err, tc.want)
		assert.Contains(t, err.Error(), tc.stderr, "the error carries sbx's own words")
	}
}

func TestSessionReadOnlyWorkspace(t *testing.T) {
	home := t.TempDir()
	f := &fakeRunner{answer: func(_ context.Context, c Cmd) (int, string, string) {
		if c.Args[0] == "ls" {
			return 0, `{"sandboxes":[]}`, ""
		}
		return 0, "", ""
	}}
	s, err := NewSession(&Client{Bin: "sbx", Runner: f}, SessionOptions{Mode: ModeRO, Home: home, Workspace: "/ws"})
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
			f := &fakeRunner{answer: func(_ context.Context, c Cmd) (int, string, string) {
				switch {
				case c.Args[0] == "ls":
					return 0, `{"sandboxes":[]}`, ""
				case c.Args[0] == "rm" && rmFails:
					return 1, "", "ERROR: daemon busy"
				}
				return 0, "", ""
			}}
			s, err := NewSession(&Client{Bin: "sbx", Runner: f}, SessionOptions{Owner: 77, Workspace: "/ws"})
			require.NoError(t, err)
			_, err = s.Ensure(context.Background())
			require.NoError(t, err)
			require.Equal(t, "/bin/sh", f.bins[1], "armed before sbx create")
			watchdog := f.ctxs[1]
			err = s.Close(context.Background())
			if rmFails {
				assert.ErrorIs(t, err, ErrFailed)
				assert.NoError(t, watchdog.Err(), "the watchdog will try again after this process exits")
			} else {
				assert.NoError(t, err)
				assert.Error(t, watchdog.Err(), "the watchdog is stopped after a clean teardown")
			}
		})
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

func (r *slowWatchdogRunner) Start(ctx context.Context, _ string, _ Cmd) (Process, error) {
	return slowProcess{ctx, &r.exited}, nil
}

// TestWatchdogStopWaitsUntilGone: after an orderly teardown the watchdog is disarmed
// before Stop returns, so an owner exiting right after cannot leave it behind to run
// sbx rm again and again.
func TestWatchdogStopWaitsUntilGone(t *testing.T) {
	r := &slowWatchdogRunner{}
	w, err := (&Client{Bin: "sbx", Runner: r}).StartWatchdog(os.Getpid(), "box", TeardownRemove, 0, nil, "")
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
	c := &Client{Bin: fakeSbx, Runner: ExecRunner{}, Env: []string{"PATH=" + os.Getenv("PATH")}}
	w, err := c.StartWatchdog(owner.Process.Pid, "box", TeardownRemove, 50*time.Millisecond, nil, "")
	require.NoError(t, err)
	require.NoError(t, w.Stop())
	require.NoError(t, owner.Process.Kill())
	owner.Wait()
	time.Sleep(500 * time.Millisecond) // ten polls
	assert.NoFileExists(t, record, "a stopped watchdog ran sbx")
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
	s.answer = func(ctx context.Context, c Cmd) (int, string, string) {
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

// TestEnsureOutlivesACancelledCall: a call cancelled while sbx create runs stops waiting,
// but the creation goes on (armed with its watchdog first); the next call waits for the
// same creation instead of starting another or hanging, and the sandbox is torn down
// with the session.
func TestEnsureOutlivesACancelledCall(t *testing.T) {
	f := newSlowCreate()
	s, err := NewSession(&Client{Bin: "sbx", Runner: f}, SessionOptions{Owner: 77, Workspace: "/ws"})
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
	s, err := NewSession(&Client{Bin: "sbx", Runner: f}, SessionOptions{Owner: 77, Workspace: "/ws"})
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
