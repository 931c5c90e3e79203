//go:build e2e

package deploy

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
)

// These tests run the deployer against sbxsim, the project's sbx simulator, with a real
// dockerd in each sandbox. They need root (sbxsim makes namespaces): not being root is a
// failure, never a skip.

var simBin string

func TestMain(m *testing.M) {
	testbin.Main(m, "", map[*string]string{&simBin: "./cmd/sbxsim"})
}

// simWorld is one test's sbxsim state and workspace.
type simWorld struct {
	t     testing.TB
	state string
	ws    string
	home  string
	// plugin is the compose plugin the sandboxes get ("none": no compose).
	plugin string
}

func newSimWorld(t testing.TB) *simWorld {
	if os.Geteuid() != 0 {
		t.Fatal("deploy's sandbox tests must run as root (sbxsim creates namespaces)")
	}
	w := &simWorld{t: t, state: t.TempDir(), ws: t.TempDir(), home: t.TempDir(), plugin: "none"}
	t.Cleanup(func() {
		out, _ := w.sim("ls", "-q")
		for _, s := range strings.Fields(out) {
			w.sim("rm", "-f", s)
		}
	})
	return w
}

func (w *simWorld) simEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + w.home, "SBXSIM_STATE=" + w.state, "SBXSIM_DOCKER=1", "SBXSIM_COMPOSE_PLUGIN=" + w.plugin}
}

func (w *simWorld) sim(args ...string) (string, int) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, simBin, args...)
	cmd.Env = w.simEnv()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), ee.ExitCode()
	}
	require.NoError(w.t, err)
	return out.String(), 0
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
	client := sbx.NewClient(environ, sbx.ExecRunner{})
	d, err := New(Config{
		Sbx: client, Sandbox: func(context.Context) (string, error) { return name, nil }, Name: name,
		Workspace: w.ws, Teardown: sbx.TeardownNone, Pinned: true, Environ: environ,
		Policy: sbx.NewEnvPolicy(environ), Home: w.home,
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
