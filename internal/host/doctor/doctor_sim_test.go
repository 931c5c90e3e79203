//go:build e2e

package doctor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/settings"
	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
	"github.com/pi-sbx/pi-sbx-backend/internal/testsim"
)

var simBin string

func TestMain(m *testing.M) {
	testbin.Main(m, "", map[*string]string{&simBin: "./cmd/sbxsim"})
}

// sim is one test's sbxsim state: its client as doctor gets it, and the simulator for
// setting the state up.
type sim struct {
	t    *testing.T
	sims *testsim.Sim
	env  []string // sbxsim settings for the client (SBXSIM_VERSION …)
}

func newSim(t *testing.T, env ...string) *sim {
	sims := testsim.New(t, simBin, false)
	sims.Settings = env
	return &sim{t: t, sims: sims, env: env}
}

func (s *sim) environ() []string {
	return append([]string{"PATH=/usr/bin:/bin", "PI_SBX_BIN=" + simBin, "SBXSIM_STATE=" + s.sims.State, "SBXSIM_DOCKER=0",
		"DOCKER_SANDBOX_ENV_ALLOWLIST=SBXSIM_STATE,SBXSIM_DOCKER,SBXSIM_VERSION,SBXSIM_SERVER_VERSION,SBXSIM_DISK_MIN_GB,SBXSIM_VIRT"}, s.env...)
}

func (s *sim) run(args ...string) {
	s.t.Helper()
	s.sims.Must(args...)
}

func (s *sim) doctor(smoke bool) Report {
	s.t.Helper()
	st, err := settings.Parse(s.environ())
	require.NoError(s.t, err)
	d := &Doctor{Sbx: st.Client(sbx.ExecRunner{}), Host: healthyLinux(), Smoke: smoke, Workspace: s.t.TempDir()}
	return d.Run(context.Background())
}

// TestAllWell: a signed-in sbx of a supported version with its daemon running passes
// every check (SSH agent forwarding, on by default, and the allow-all preset the tests'
// simulator chooses are warnings), smoke included; each warning's fix makes it a pass.
func TestAllWell(t *testing.T) {
	s := newSim(t)
	r := s.doctor(true)
	assert.True(t, r.OK(), r.Text())
	for _, c := range r.Checks {
		want := Pass
		if c.Name == "ssh agent forwarding" || c.Name == "network policy" {
			want = Warn
		}
		assert.Equal(t, want, c.Status, "%+v", c)
	}
	assert.Contains(t, check(t, r, "smoke").Evidence, "as agent")
	assert.Contains(t, check(t, r, "sbx found").Evidence, simBin)
	s.run("settings", "set", "ssh.agentForwardingEnabled", "false")
	s.run("policy", "init", "balanced")
	r = s.doctor(false)
	assert.Equal(t, Pass, check(t, r, "ssh agent forwarding").Status)
	assert.Equal(t, Pass, check(t, r, "network policy").Status, "%+v", check(t, r, "network policy"))
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
		{check: "version", fix: "sbx daemon restart", env: []string{"SBXSIM_SERVER_VERSION=0.52.0"}, evidence: "client v0.55.0 but daemon v0.52.0"},
		// A fresh install's state: no preset chosen (policy reset forgets it).
		{check: "network policy", fix: "sbx policy init balanced", setup: func(s *sim) { s.run("policy", "reset") }, evidence: "no network preset chosen"},
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
