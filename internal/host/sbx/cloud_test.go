package sbx

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCloudArgvIsInTheContract: every call of a cloud client carries --cloud, is valid
// per the contract at the first version with --cloud and the newest seen, and a create
// has no workspace, stops (never deletes) at its time to live's end.
func TestCloudArgvIsInTheContract(t *testing.T) {
	for _, version := range []string{CloudSince, V055} {
		t.Run(version, func(t *testing.T) {
			f := &fakeRunner{version: version, answer: func(_ context.Context, c Cmd) (int, string, string) {
				if strings.Contains(strings.Join(c.Args, " "), " inspect ") {
					return 0, `{"name":"box","status":"running"}`, ""
				}
				return 0, "[]", ""
			}}
			c := (&Client{Bin: "sbx", Runner: f}).InCloud()
			ctx := context.Background()
			require.NoError(t, c.CheckCloud(ctx))
			require.NoError(t, c.Create(ctx, "box", CreateOpts{Cloud: CloudOpts{Size: "large"}}))
			_, err := c.Exec(ctx, "box", []string{"true"}, ExecOpts{Interactive: true, Workdir: "/w", Env: []string{"PI_X=1"}})
			require.NoError(t, err)
			require.NoError(t, c.Cp(ctx, "/tmp/b", "box:/tmp/b"))
			require.NoError(t, c.ExtendTTL(ctx, "box", 90*time.Minute))
			require.NoError(t, c.Stop(ctx, "box"))
			require.NoError(t, c.Rm(ctx, "box"))
			s, err := c.StartExec(ctx, "box", []string{"agent"}, ExecOpts{Interactive: true})
			require.NoError(t, err)
			require.NoError(t, s.Wait())
			for _, call := range f.calls {
				assert.NoError(t, ValidateArgv(call.Args, version), "%q", call.Args)
				assert.Contains(t, call.Args[:2], "--cloud", "%q", call.Args)
			}
			argv := f.argvs()
			var create string
			for _, a := range argv {
				if strings.Contains(a, " create ") {
					create = a
				}
			}
			assert.Regexp(t, `create --name box --size large --ttl 60m --on-timeout stop .*shell$`, create)
			ttl := "--cloud ttl box +90m"
			if CompareVersions(version, V055) >= 0 {
				ttl = "--no-input " + ttl
			}
			assert.Contains(t, argv, ttl)
		})
	}
}

// TestCloudRejectsLocalFlags: exec -u, --privileged and -d never reach a cloud sandbox
// (the client refuses them before sbx runs), and the contract says so.
func TestCloudRejectsLocalFlags(t *testing.T) {
	f := &fakeRunner{answer: func(context.Context, Cmd) (int, string, string) { return 0, "", "" }}
	c := (&Client{Bin: "sbx", Runner: f}).InCloud()
	for _, o := range []ExecOpts{{User: "root"}, {Privileged: true}} {
		_, err := c.Exec(context.Background(), "box", []string{"id"}, o)
		assert.ErrorIs(t, err, ErrFailed, "%+v", o)
		_, err = c.StartExec(context.Background(), "box", []string{"id"}, o)
		assert.Error(t, err, "%+v", o)
	}
	assert.Empty(t, f.calls, "nothing ran")
	for _, tc := range []struct {
		argv []string
		ok   bool
	}{
		{[]string{"--cloud", "exec", "-i", "box", "--", "sh", "-u"}, true},
		{[]string{"--cloud", "exec", "-u", "root", "box", "id"}, false},
		{[]string{"--cloud", "exec", "--privileged", "box", "id"}, false},
		{[]string{"--cloud", "exec", "-d", "box", "id"}, false},
		{[]string{"exec", "-u", "root", "--privileged", "box", "id"}, true},
		{[]string{"--cloud", "ttl", "box", "+30m"}, true},
		{[]string{"ttl", "box", "+30m"}, false},
		{[]string{"create", "--ttl", "1h", "shell", "/w"}, false},
		{[]string{"--cloud", "create", "--name", "box", "--on-timeout", "stop", "shell"}, true},
		{[]string{"--cloud", "create", "--name", "box", "--size", "xl", "--ttl", "2h", "--on-timeout", "stop", "-q", "shell"}, true},
		{[]string{"--cloud", "create", "--clone", "--name", "box", "shell"}, false}, // no host workspace to clone
		{[]string{"create", "--clone", "--name", "box", "shell", "/w"}, true},
		{[]string{"--cloud", "create", "--name", "box", "shell", "/w"}, false}, // no workspace mount
		{[]string{"--cloud", "create", "shell", "--name", "box", "/w:ro"}, false},
		{[]string{"create", "--name", "box", "shell", "/w", "/d:ro"}, true},
		{[]string{"--cloud", "run", "-d", "--name", "box", "shell"}, true},
		{[]string{"--cloud", "run", "-d", "--name", "box"}, true},
		{[]string{"--cloud", "run", "-d", "shell", "."}, false},
		{[]string{"--cloud", "run", "--ttl", "1h", "shell"}, false}, // the table has them on create only
		{[]string{"--cloud", "exec", "--ttl", "1h", "box", "id"}, false},
		{[]string{"--cloud", "exec", "-i", "-e", "PI_X=1", "-w", "/w", "box", "sh", "/w"}, true}, // exec's command is its own
	} {
		err := ValidateArgv(tc.argv, V055)
		assert.Equal(t, tc.ok, err == nil, "%q: %v", tc.argv, err)
	}
	assert.Error(t, ValidateArgv([]string{"--cloud", "ls"}, "0.44.0"), "--cloud before 0.45")
	assert.Equal(t, "-u", CloudRejects([]string{"exec", "-i", "-u", "root", "box", "id"}))
	assert.Equal(t, "", CloudRejects([]string{"exec", "-i", "box", "sh", "-u"}))
	assert.Equal(t, "--clone", CloudRejects([]string{"create", "--name", "box", "--clone", "shell"}))
}

func TestCloudNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"pi-sbx-12-abc", true},
		{"pi-sbx-my.project-1a2b3c4d", false},
		{"a", false},
	} {
		assert.Equal(t, tc.ok, ValidateCloudName(tc.name) == nil, tc.name)
	}
	assert.Equal(t, "pi-sbx-my-project-1a2b3c4d", CloudName("pi-sbx-my.project-1a2b3c4d"))
	f := &fakeRunner{answer: func(context.Context, Cmd) (int, string, string) { return 0, "", "" }}
	c := (&Client{Bin: "sbx", Runner: f}).InCloud()
	assert.ErrorIs(t, c.Create(context.Background(), "my.box", CreateOpts{}), ErrBadName)
	assert.Error(t, c.Create(context.Background(), "box", CreateOpts{Workspaces: []string{"/w"}}), "no mount in the cloud")
}

func TestCloudQuotaIsOneClearLine(t *testing.T) {
	f := &fakeRunner{answer: func(context.Context, Cmd) (int, string, string) {
		return 1, "", "ERROR: quota exceeded: at most 10 concurrent cloud sandboxes"
	}}
	c := (&Client{Bin: "sbx", Runner: f}).InCloud()
	err := c.Create(context.Background(), "box", CreateOpts{})
	require.ErrorIs(t, err, ErrQuota)
	assert.NotContains(t, err.Error(), "\n")
	var se *Error
	require.True(t, errors.As(err, &se))
	// An exec whose command prints the word is the command's own failure.
	assert.NoError(t, classify("exec", 3, "quota exceeded"))
}

func TestCloudOpts(t *testing.T) {
	_, err := CloudOpts{Size: "huge"}.args()
	assert.Error(t, err)
	_, err = CloudOpts{TTL: 25 * time.Hour}.args()
	assert.Error(t, err)
	args, err := CloudOpts{TTL: 90 * time.Minute, OnTimeout: "stop"}.args()
	require.NoError(t, err)
	assert.Equal(t, []string{"--ttl", "90m", "--on-timeout", "stop"}, args)
}
