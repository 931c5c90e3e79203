package sbx

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
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
