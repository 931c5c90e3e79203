package doctor

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
)

var simBin string

func TestMain(m *testing.M) {
	testbin.Main(m, "", map[*string]string{&simBin: "./cmd/sbxsim"})
}

// sim is one test's sbxsim state: its client as doctor gets it, and the simulator for
// setting the state up.
type sim struct {
	t     *testing.T
	state string
	env   []string // sbxsim settings for the client (SBXSIM_VERSION …)
}

func newSim(t *testing.T, env ...string) *sim {
	if os.Geteuid() != 0 {
		t.Fatal("doctor's tests run sbxsim, which needs root; CI runs them as root")
	}
	return &sim{t: t, state: t.TempDir(), env: env}
}

func (s *sim) environ() []string {
	return append([]string{"PATH=/usr/bin:/bin", "PI_SBX_BIN=" + simBin, "SBXSIM_STATE=" + s.state, "SBXSIM_DOCKER=0",
		"DOCKER_SANDBOX_ENV_ALLOWLIST=SBXSIM_STATE,SBXSIM_DOCKER,SBXSIM_VERSION,SBXSIM_SERVER_VERSION,SBXSIM_DISK_MIN_GB,SBXSIM_VIRT"}, s.env...)
}

func (s *sim) run(args ...string) {
	s.t.Helper()
	cmd := exec.Command(simBin, args...)
	cmd.Env = s.environ()
	out, err := cmd.CombinedOutput()
	require.NoError(s.t, err, "sbxsim %v: %s", args, out)
}

func (s *sim) doctor(smoke bool) Report {
	s.t.Helper()
	d := &Doctor{Sbx: sbx.NewClient(s.environ(), sbx.ExecRunner{}), Host: healthyLinux(), Smoke: smoke, Workspace: s.t.TempDir()}
	return d.Run(context.Background())
}

func healthyLinux() Host {
	return Host{GOOS: "linux", GOARCH: "amd64", KVM: func() error { return nil }}
}

func check(t *testing.T, r Report, name string) Check {
	t.Helper()
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", name, r.Checks)
	return Check{}
}

// TestAllWell: a signed-in sbx of a supported version with its daemon running passes
// every check (SSH agent forwarding, on by default, is a warning), smoke included.
func TestAllWell(t *testing.T) {
	s := newSim(t)
	r := s.doctor(true)
	assert.True(t, r.OK(), r.Text())
	for _, c := range r.Checks {
		want := Pass
		if c.Name == "ssh agent forwarding" {
			want = Warn
		}
		assert.Equal(t, want, c.Status, "%+v", c)
	}
	assert.Contains(t, check(t, r, "smoke").Evidence, "as agent")
	assert.Contains(t, check(t, r, "sbx found").Evidence, simBin)
	s.run("settings", "set", "ssh.agentForwardingEnabled", "false")
	assert.Equal(t, Pass, check(t, s.doctor(false), "ssh agent forwarding").Status)
}

// TestEveryCheckCanFail: each check fails (with the command that fixes it) in the sbxsim
// state that breaks it.
func TestEveryCheckCanFail(t *testing.T) {
	tests := []struct {
		check, fix string
		env        []string
		setup      func(s *sim)
		evidence   string
	}{
		{check: "daemon running", fix: "sbx daemon start", setup: func(s *sim) { s.run("daemon", "stop") }, evidence: "not running"},
		{check: "signed in", fix: "sbx login", setup: func(s *sim) { s.run("logout") }, evidence: "signed out"},
		{check: "smoke", fix: "sbx diagnose", setup: func(s *sim) { s.run("logout") }, evidence: "sbx create"},
		{check: "version", fix: sbx.UpgradeHint(), env: []string{"SBXSIM_VERSION=0.40.0"}, evidence: "v0.40.0 is older than v" + sbx.MinVersion},
		{check: "version", fix: "sbx daemon restart", env: []string{"SBXSIM_SERVER_VERSION=0.52.0"}, evidence: "client v0.53.0 but daemon v0.52.0"},
		{check: "disk", fix: "free disk space", env: []string{"SBXSIM_DISK_MIN_GB=1000000"}, evidence: "GB free"},
		{check: "virtualization", fix: "usermod -aG kvm", env: []string{"SBXSIM_VIRT=off"}, evidence: "not available"},
	}
	for _, tc := range tests {
		t.Run(tc.check+" "+tc.evidence, func(t *testing.T) {
			s := newSim(t, tc.env...)
			if tc.setup != nil {
				tc.setup(s)
			}
			r := s.doctor(true)
			c := check(t, r, tc.check)
			assert.Equal(t, Fail, c.Status, "%+v", c)
			assert.Contains(t, c.Fix, tc.fix)
			assert.Contains(t, c.Evidence, tc.evidence)
			assert.False(t, r.OK())
		})
	}
}

// TestSbxMissing: without sbx anywhere, one FAIL names every place searched and the
// install command; nothing else runs.
func TestSbxMissing(t *testing.T) {
	bin, err := sbx.FindBin([]string{"PATH=/usr/bin:/bin"}, sbx.Places{GOOS: "darwin", Dirs: []string{"/nonexistent/homebrew/bin"}})
	c := &sbx.Client{Bin: bin, Runner: sbx.ExecRunner{}, Missing: err}
	r := (&Doctor{Sbx: c, Host: healthyLinux()}).Run(context.Background())
	require.Len(t, r.Checks, 1)
	assert.Equal(t, Fail, r.Checks[0].Status)
	assert.Contains(t, r.Checks[0].Evidence, "PATH (/usr/bin:/bin)")
	assert.Contains(t, r.Checks[0].Evidence, "/nonexistent/homebrew/bin")
	assert.True(t, strings.HasPrefix(r.Summary(), "sbx not found: searched "), r.Summary())
	assert.True(t, strings.HasSuffix(r.Summary(), "— run "+sbx.InstallHint()), r.Summary())
}

// TestPIBinWrong: a PI_SBX_BIN that names no program fails the first check.
func TestPIBinWrong(t *testing.T) {
	c := sbx.NewClient([]string{"PI_SBX_BIN=/nonexistent/sbx"}, sbx.ExecRunner{})
	r := (&Doctor{Sbx: c, Host: healthyLinux()}).Run(context.Background())
	require.Len(t, r.Checks, 1)
	assert.Equal(t, Fail, r.Checks[0].Status)
	assert.Contains(t, r.Checks[0].Evidence, "PI_SBX_BIN=/nonexistent/sbx")
}

// TestPlatformChecks: without sbx diagnose's verdict, virtualization is probed per
// platform, and each probe can fail.
func TestPlatformChecks(t *testing.T) {
	tests := []struct {
		name string
		host Host
		want Status
		fix  string
	}{
		{"linux kvm", Host{GOOS: "linux", KVM: func() error { return nil }}, Pass, ""},
		{"linux no kvm", Host{GOOS: "linux", KVM: func() error { return errors.New("permission denied") }}, Fail, "usermod -aG kvm"},
		{"mac 14 arm", Host{GOOS: "darwin", GOARCH: "arm64", MacOSVersion: func(context.Context) (string, error) { return "14.5", nil }}, Pass, ""},
		{"mac 13", Host{GOOS: "darwin", GOARCH: "arm64", MacOSVersion: func(context.Context) (string, error) { return "13.6.1", nil }}, Fail, "softwareupdate"},
		{"intel mac", Host{GOOS: "darwin", GOARCH: "amd64"}, Fail, ""},
		{"windows off", Host{GOOS: "windows", Hypervisor: func(context.Context) (bool, error) { return false, nil }}, Fail, "HypervisorPlatform"},
		{"windows unknown", Host{GOOS: "windows", Hypervisor: hypervisorUnknown}, Warn, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := (&Doctor{Host: tc.host}).virtualization(context.Background(), nil)
			assert.Equal(t, tc.want, c.Status, "%+v", c)
			assert.Contains(t, c.Fix, tc.fix)
		})
	}
	// sbx diagnose's own verdict wins, failure included.
	c := (&Doctor{Host: healthyLinux()}).virtualization(context.Background(),
		[]sbx.DiagCheck{{Name: "Virtualization", Status: "fail", Message: "KVM is not available", Hint: "enable nested virtualization"}})
	assert.Equal(t, Check{Name: "virtualization", Status: Fail, Evidence: "KVM is not available [sbx diagnose]", Fix: "enable nested virtualization"}, c)
}

func TestSummary(t *testing.T) {
	r := Report{Checks: []Check{{Name: "sbx found", Status: Pass}, {Name: "signed in", Status: Fail, Evidence: "sbx is signed out", Fix: "sbx login"}}}
	assert.Equal(t, "sbx is signed out — run sbx login", r.Summary())
	assert.Contains(t, r.Text(), "fix: sbx login")
	assert.Equal(t, "", Report{Checks: []Check{{Status: Warn}}}.Summary())
}
