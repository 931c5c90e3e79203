//go:build e2e

package deploy

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/lifecycle"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/settings"
	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
	"github.com/pi-sbx/pi-sbx-backend/internal/testsim"
)

// These tests run the deployer against sbxsim, the project's sbx simulator, with a real
// dockerd in each sandbox. They need root (sbxsim makes namespaces): not being root is a
// failure, never a skip.

var simBin string

func TestMain(m *testing.M) {
	testbin.Main(m, "", map[*string]string{&simBin: "./cmd/sbxsim"})
}

// simWorld is one test's sbxsim (with a dockerd in each sandbox) and workspace.
type simWorld struct {
	t    testing.TB
	sims *testsim.Sim
	ws   string
	home string
	// plugin is the compose plugin the sandboxes get ("none": no compose).
	plugin string
}

func newSimWorld(t testing.TB) *simWorld {
	sims := testsim.New(t, simBin, true)
	w := &simWorld{t: t, sims: sims, ws: t.TempDir(), home: t.TempDir(), plugin: "none"}
	sims.Home = w.home
	// Before the workspace and home go (cleanups run last registered first): the
	// sandboxes' containers may still be writing there.
	t.Cleanup(func() { w.sim("rm", "-f", "--all") })
	return w
}

func (w *simWorld) simEnv() []string {
	return w.sims.Env("SBXSIM_COMPOSE_PLUGIN=" + w.plugin)
}

// sim runs sbxsim and returns its output (stdout and stderr interleaved) and exit code.
func (w *simWorld) sim(args ...string) (string, int) {
	w.t.Helper()
	r := w.sims.RunWith([]string{"SBXSIM_COMPOSE_PLUGIN=" + w.plugin}, "", args...)
	return r.Output, r.Code
}

// environ is the host environment the deployer is given: the simulator's settings
// (allowlisted), plus what a user's shell might hold.
func (w *simWorld) environ(extra ...string) []string {
	return append(append(w.simEnv(),
		"PI_SBX_BIN="+simBin,
		"DOCKER_SANDBOX_ENV_ALLOWLIST=SBXSIM_STATE,SBXSIM_DOCKER,SBXSIM_COMPOSE_PLUGIN",
		"HOST_SECRET=must-not-cross"), extra...)
}

// deployer returns a Deployer for an existing sandbox name.
func (w *simWorld) deployer(name string, environ []string) *Deployer {
	st, err := settings.Parse(environ)
	require.NoError(w.t, err)
	d, err := New(Config{
		Sbx: st.Client(sbx.ExecRunner{}), Sandbox: func(context.Context) (string, error) { return name, nil }, Name: name,
		Workspace: w.ws, Teardown: lifecycle.TeardownNone, Pinned: true, Settings: st,
	})
	require.NoError(w.t, err)
	return d
}

func (w *simWorld) create(name string, workspaces ...string) {
	out, code := w.sim(append([]string{"create", "--name", name, "shell", w.ws}, workspaces...)...)
	require.Zero(w.t, code, out)
}

// newComposeWorld is a simWorld whose sandboxes have the compose plugin scripts/setup.sh
// builds.
func newComposeWorld(t testing.TB) *simWorld {
	w := newSimWorld(t)
	p, err := filepath.Abs("../../../.cache/compose/v2.40.3/docker-compose")
	require.NoError(t, err)
	_, err = os.Stat(p)
	require.NoError(t, err, "docker compose is built by scripts/setup.sh")
	w.plugin = p
	return w
}

// createRO creates a sandbox with the workspace read-only, as serve does in
// DOCKER_SANDBOX_WORKSPACE_RO mode: a scratch primary and the project :ro.
func (w *simWorld) createRO(name string) {
	out, code := w.sim("create", "--name", name, "shell", w.t.TempDir(), w.ws+":ro")
	require.Zero(w.t, code, out)
}
