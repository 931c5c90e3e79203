package settings

import (
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/lifecycle"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

var update = flag.Bool("update", false, "rewrite docs/settings.md from the code")

// TestParse: each variable is read into its typed field, an empty value is unset and the
// last value of a name wins.
func TestParse(t *testing.T) {
	ws := "/home/u/project"
	for _, tc := range []struct {
		name    string
		environ []string
		check   func(t *testing.T, s Settings)
	}{
		{"defaults", nil, func(t *testing.T, s Settings) {
			assert.Equal(t, lifecycle.ModeRW, s.Mode)
			assert.Equal(t, 24.0, s.GCHours)
			assert.Equal(t, ToolsAndDeploy, s.ToolMode)
			assert.Equal(t, "", s.Teardown)
			assert.False(t, s.Pinned())
		}},
		{"pinned", []string{"DOCKER_SANDBOX=mybox", "DOCKER_SANDBOX_TEARDOWN=stop"}, func(t *testing.T, s Settings) {
			assert.Equal(t, "mybox", s.Sandbox)
			assert.True(t, s.Pinned())
			assert.Equal(t, lifecycle.TeardownStop, s.Teardown)
		}},
		{"empty is unset", []string{"DOCKER_SANDBOX=", "PI_SBX_MODE=", "DOCKER_SANDBOX_GC_HOURS= "}, func(t *testing.T, s Settings) {
			assert.False(t, s.Pinned())
			assert.Equal(t, ToolsAndDeploy, s.ToolMode)
			assert.Equal(t, 24.0, s.GCHours)
		}},
		{"last wins", []string{"DOCKER_SANDBOX=a1", "DOCKER_SANDBOX=b2"}, func(t *testing.T, s Settings) {
			assert.Equal(t, "b2", s.Sandbox)
		}},
		{"bools one way", []string{"DOCKER_SANDBOX_REUSE=yes", "DOCKER_SANDBOX_TEARDOWN_FORCE=TRUE", "DOCKER_SANDBOX_ENV_PASSTHROUGH=1"}, func(t *testing.T, s Settings) {
			assert.True(t, s.Reuse)
			assert.True(t, s.TeardownForce)
			assert.True(t, s.Policy.Passthrough)
		}},
		{"bools off", []string{"DOCKER_SANDBOX_REUSE=0", "DOCKER_SANDBOX_TEARDOWN_FORCE=off", "DOCKER_SANDBOX_ENV_PASSTHROUGH=false"}, func(t *testing.T, s Settings) {
			assert.False(t, s.Reuse || s.TeardownForce || s.Policy.Passthrough)
		}},
		{"allowlist keeps valid names, never docker ones", []string{"DOCKER_SANDBOX_ENV_ALLOWLIST=MYVAR, DOCKER_HOST,bad-name,COMPOSE_FILE,B"}, func(t *testing.T, s Settings) {
			assert.Equal(t, []string{"MYVAR", "B"}, s.Policy.Allow)
		}},
		{"resources", []string{"DOCKER_SANDBOX_CPUS= 4", "DOCKER_SANDBOX_MEMORY=8g", "DOCKER_SANDBOX_TEMPLATE=docker/sandbox-templates:shell"}, func(t *testing.T, s Settings) {
			assert.Equal(t, []string{"--cpus", "4", "--memory", "8g", "--template", "docker/sandbox-templates:shell"}, s.Resources.Args())
		}},
		{"mode", []string{"DOCKER_SANDBOX_WORKSPACE_MODE=Review"}, func(t *testing.T, s Settings) {
			assert.Equal(t, lifecycle.ModeReview, s.Mode)
		}},
		{"mode alias", []string{"DOCKER_SANDBOX_WORKSPACE_RO=1"}, func(t *testing.T, s Settings) { assert.Equal(t, lifecycle.ModeRO, s.Mode) }},
		{"mode alias off", []string{"DOCKER_SANDBOX_WORKSPACE_RO=0"}, func(t *testing.T, s Settings) { assert.Equal(t, lifecycle.ModeRW, s.Mode) }},
		{"mode and alias agree", []string{"DOCKER_SANDBOX_WORKSPACE_RO=true", "DOCKER_SANDBOX_WORKSPACE_MODE=ro"}, func(t *testing.T, s Settings) {
			assert.Equal(t, lifecycle.ModeRO, s.Mode)
		}},
		{"gc hours", []string{"DOCKER_SANDBOX_GC_HOURS= 1.5 "}, func(t *testing.T, s Settings) { assert.Equal(t, 1.5, s.GCHours) }},
		{"gc off", []string{"DOCKER_SANDBOX_GC_HOURS=0"}, func(t *testing.T, s Settings) { assert.Zero(t, s.GCHours) }},
		{"serve's", []string{"PI_SBX_MODE=Tools", "PI_SBX_TOOLS=+terminal", "PI_SBX_DETAILS=structured", "PI_SBX_BIN=/opt/sbx"}, func(t *testing.T, s Settings) {
			assert.Equal(t, ToolsOnly, s.ToolMode)
			assert.True(t, s.Terminal)
			assert.Equal(t, DetailsStructured, s.Details)
			assert.Equal(t, "/opt/sbx", s.SbxBin)
		}},
		{"network", []string{"PI_SBX_NETWORK= Locked"}, func(t *testing.T, s Settings) { assert.Equal(t, "locked", s.Network) }},
		{"state home from HOME", []string{"HOME=/h"}, func(t *testing.T, s Settings) {
			assert.Equal(t, "/h/.local/state", s.StateHome)
			o, err := s.Owners()
			require.NoError(t, err)
			assert.Equal(t, "/h/.local/state/pi-sbx-backend/owners", o.Dir)
		}},
		{"XDG_STATE_HOME wins", []string{"HOME=/h", "XDG_STATE_HOME=/s"}, func(t *testing.T, s Settings) {
			assert.Equal(t, "/s", s.StateHome)
		}},
		{"a relative XDG_STATE_HOME is ignored", []string{"HOME=/h", "XDG_STATE_HOME=rel"}, func(t *testing.T, s Settings) {
			assert.Equal(t, "/h/.local/state", s.StateHome)
		}},
		{"no state home", nil, func(t *testing.T, s Settings) {
			_, err := s.Owners()
			assert.ErrorContains(t, err, "HOME (or XDG_STATE_HOME)")
		}},
		{"reuse pins the project's sandbox", []string{"DOCKER_SANDBOX_REUSE=1"}, func(t *testing.T, s Settings) {
			p, reused := s.ForProject(ws)
			assert.True(t, reused)
			assert.Equal(t, lifecycle.ProjectName(ws), p.Sandbox)
			assert.False(t, s.Pinned(), "the receiver is unchanged")
		}},
		{"a pinned name wins over reuse", []string{"DOCKER_SANDBOX_REUSE=1", "DOCKER_SANDBOX=mine"}, func(t *testing.T, s Settings) {
			p, reused := s.ForProject(ws)
			assert.False(t, reused)
			assert.Equal(t, "mine", p.Sandbox)
		}},
		{"cloud is review mode", []string{"PI_SBX_CLOUD=1", "PI_SBX_CLOUD_SIZE= Large", "PI_SBX_CLOUD_EXTEND=90s"}, func(t *testing.T, s Settings) {
			assert.True(t, s.Cloud)
			assert.Equal(t, "large", s.CloudSize)
			assert.Equal(t, 90*time.Second, s.CloudExtend)
			assert.Equal(t, lifecycle.ModeReview, s.Mode)
		}},
		{"cloud ship: cleaned, relative, once each", []string{"PI_SBX_CLOUD=1", "PI_SBX_CLOUD_SHIP= vendor/ ,./node_modules,,a/../b/c.env,vendor"}, func(t *testing.T, s Settings) {
			assert.Equal(t, []string{"vendor", "node_modules", "b/c.env"}, s.CloudShip)
		}},
		{"cloud with review asked for", []string{"PI_SBX_CLOUD=yes", "DOCKER_SANDBOX_WORKSPACE_MODE=review"}, func(t *testing.T, s Settings) {
			assert.Equal(t, lifecycle.ModeReview, s.Mode)
		}},
		{"cloud reuse: the project's name without periods", []string{"PI_SBX_CLOUD=1", "DOCKER_SANDBOX_REUSE=1"}, func(t *testing.T, s Settings) {
			p, _ := s.ForProject("/home/u/site.example.com")
			assert.NoError(t, sbx.ValidateCloudName(p.Sandbox), p.Sandbox)
		}},
		{"the host environment is kept as it was", []string{"PI_MODEL=m", "DOCKER_HOST=unix:///d.sock", "SECRET=s", "PATH=/bin"}, func(t *testing.T, s Settings) {
			assert.Equal(t, []string{"PI_MODEL=m", "DOCKER_HOST=unix:///d.sock", "SECRET=s", "PATH=/bin"}, s.Environ)
			assert.Equal(t, []string{"PI_MODEL=m"}, s.VMEnv())
			assert.Equal(t, "unix:///d.sock", s.DockerHost)
			assert.Equal(t, "/bin", s.Path)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.environ)
			require.NoError(t, err)
			tc.check(t, s)
		})
	}
}

// TestParseErrors: a value the program cannot use is one line naming the variable and
// the value; a removed variable says what replaced it.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		environ []string
		want    string
	}{
		{[]string{"DOCKER_SANDBOX=bad_name"}, `DOCKER_SANDBOX: invalid sandbox name "bad_name"`},
		{[]string{"DOCKER_SANDBOX_TEARDOWN=explode"}, `DOCKER_SANDBOX_TEARDOWN="explode": want remove, stop or none`},
		{[]string{"DOCKER_SANDBOX_REUSE=maybe"}, `DOCKER_SANDBOX_REUSE="maybe": want 1 or 0`},
		{[]string{"DOCKER_SANDBOX_TEARDOWN_FORCE=2"}, `DOCKER_SANDBOX_TEARDOWN_FORCE="2": want 1 or 0`},
		{[]string{"DOCKER_SANDBOX_ENV_PASSTHROUGH=all"}, `DOCKER_SANDBOX_ENV_PASSTHROUGH="all": want 1 or 0`},
		{[]string{"DOCKER_SANDBOX_WORKSPACE_MODE=clone"}, `DOCKER_SANDBOX_WORKSPACE_MODE="clone": want rw, ro or review`},
		{[]string{"DOCKER_SANDBOX_WORKSPACE_RO=maybe"}, `DOCKER_SANDBOX_WORKSPACE_RO="maybe": want 1 or 0`},
		{[]string{"DOCKER_SANDBOX_WORKSPACE_RO=1", "DOCKER_SANDBOX_WORKSPACE_MODE=review"}, "disagree: set only DOCKER_SANDBOX_WORKSPACE_MODE"},
		{[]string{"DOCKER_SANDBOX_WORKSPACE_RO=0", "DOCKER_SANDBOX_WORKSPACE_MODE=ro"}, "disagree"},
		{[]string{"DOCKER_SANDBOX_CPUS=1.5"}, `DOCKER_SANDBOX_CPUS="1.5": want a whole number`},
		{[]string{"DOCKER_SANDBOX_MEMORY=256m"}, `DOCKER_SANDBOX_MEMORY="256m": the minimum is 512 MiB`},
		{[]string{"DOCKER_SANDBOX_TEMPLATE=--privileged"}, `DOCKER_SANDBOX_TEMPLATE="--privileged": want an image reference`},
		{[]string{"DOCKER_SANDBOX_GC_HOURS=-1"}, `DOCKER_SANDBOX_GC_HOURS="-1": want hours >= 0`},
		{[]string{"DOCKER_SANDBOX_GC_HOURS=soon"}, `DOCKER_SANDBOX_GC_HOURS="soon"`},
		{[]string{"DOCKER_SANDBOX_GC_HOURS=99999"}, `DOCKER_SANDBOX_GC_HOURS="99999"`},
		{[]string{"PI_SBX_MODE=everything"}, `PI_SBX_MODE="everything": want tools, deploy or both`},
		{[]string{"PI_SBX_TOOLS=+browser"}, `PI_SBX_TOOLS "+browser": want +terminal`},
		{[]string{"PI_SBX_DETAILS=some"}, `PI_SBX_DETAILS "some": want none or structured`},
		{[]string{"PI_SBX_NETWORK=closed"}, `PI_SBX_NETWORK="closed": want locked, balanced or open`},
		{[]string{"PI_SBX_CLOUD=2"}, `PI_SBX_CLOUD="2": want 1 or 0`},
		{[]string{"PI_SBX_CLOUD=1", "PI_SBX_CLOUD_SIZE=huge"}, `PI_SBX_CLOUD_SIZE="huge": want micro, small, medium, large or xl`},
		{[]string{"PI_SBX_CLOUD_SIZE=xl"}, `PI_SBX_CLOUD_SIZE=xl without PI_SBX_CLOUD=1`},
		{[]string{"PI_SBX_CLOUD=1", "PI_SBX_CLOUD_EXTEND=soon"}, `PI_SBX_CLOUD_EXTEND="soon": want a positive duration`},
		{[]string{"PI_SBX_CLOUD=1", "PI_SBX_CLOUD_EXTEND=-5m"}, `PI_SBX_CLOUD_EXTEND="-5m": want a positive duration`},
		{[]string{"PI_SBX_CLOUD_EXTEND=5m"}, `PI_SBX_CLOUD_EXTEND=5m0s without PI_SBX_CLOUD=1`},
		{[]string{"PI_SBX_CLOUD_SHIP=vendor"}, `PI_SBX_CLOUD_SHIP=vendor without PI_SBX_CLOUD=1`},
		{[]string{"PI_SBX_CLOUD=1", "PI_SBX_CLOUD_SHIP=vendor,/etc"}, `PI_SBX_CLOUD_SHIP: "/etc" is outside the workspace`},
		{[]string{"PI_SBX_CLOUD=1", "PI_SBX_CLOUD_SHIP=a/../../up"}, `PI_SBX_CLOUD_SHIP: "a/../../up" is outside the workspace`},
		{[]string{"PI_SBX_CLOUD=1", "PI_SBX_CLOUD_SHIP=.."}, `PI_SBX_CLOUD_SHIP: ".." is outside the workspace`},
		{[]string{"PI_SBX_CLOUD=1", "PI_SBX_CLOUD_SHIP=.git"}, `PI_SBX_CLOUD_SHIP: ".git": a .git directory is never shipped`},
		{[]string{"PI_SBX_CLOUD=1", "PI_SBX_CLOUD_SHIP=sub/.git/hooks"}, `a .git directory is never shipped`},
		{[]string{"PI_SBX_CLOUD=1", "DOCKER_SANDBOX_WORKSPACE_MODE=rw"}, `review mode only`},
		{[]string{"PI_SBX_CLOUD=1", "DOCKER_SANDBOX_WORKSPACE_RO=1"}, `not DOCKER_SANDBOX_WORKSPACE_MODE=ro`},
		{[]string{"PI_SBX_CLOUD=1", "DOCKER_SANDBOX_CPUS=4"}, `PI_SBX_CLOUD_SIZE`},
		{[]string{"PI_SBX_CLOUD=1", "DOCKER_SANDBOX=my.box"}, `no periods`},
		{[]string{"PI_SBX_DOCKER_TOOLS=0"}, `PI_SBX_DOCKER_TOOLS="0" is no longer read: use PI_SBX_MODE=tools`},
	} {
		_, err := Parse(tc.environ)
		require.Error(t, err, "%v", tc.environ)
		assert.Contains(t, err.Error(), tc.want, "%v", tc.environ)
		assert.NotContains(t, err.Error(), "\n", "one line")
		var se *Error
		assert.ErrorAs(t, err, &se, "%v", tc.environ)
	}
}

// TestTableIsComplete: every row has its documentation and a parser, once.
func TestTableIsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range Vars() {
		assert.False(t, seen[v.Name], "%s twice", v.Name)
		seen[v.Name] = true
		assert.NotEmpty(t, v.Type, v.Name)
		assert.NotEmpty(t, v.Meaning, v.Name)
		assert.NotNil(t, v.set, v.Name)
	}
	for _, r := range removed {
		assert.False(t, seen[r.name], "%s is both read and removed", r.name)
	}
}

// TestSettingsDoc: docs/settings.md is what the code says (go generate, or
// go test -run TestSettingsDoc -update, rewrites it).
func TestSettingsDoc(t *testing.T) {
	const path = "../../../docs/settings.md"
	want := Markdown()
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
	}
	got, err := os.ReadFile(path)
	require.NoError(t, err, "run go generate ./internal/host/settings")
	assert.Equal(t, want, string(got), "docs/settings.md differs from the code: run go generate ./internal/host/settings")
	for _, v := range Vars() {
		assert.True(t, strings.Contains(string(got), "`"+v.Name+"`"), v.Name)
	}
}
