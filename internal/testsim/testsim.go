// Package testsim is the one way tests set up sbxsim, the project's simulator of the sbx
// CLI: a state directory of the test's own, the simulator's environment, runs of the
// simulator with a bound, and every sandbox removed when the test ends. Tests of the e2e
// tier use it (e2e/, internal/sbxsim/e2e, deploy's and doctor's sandbox tests); nothing
// of the product links it (internal/arch checks).
package testsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
)

// runBound keeps a hung simulator from holding the suite; a run normally takes
// milliseconds to seconds.
const runBound = 3 * time.Minute

// Sim is one test's simulator.
type Sim struct {
	T     testing.TB
	Bin   string // the sbxsim binary (testbin.Main builds it)
	State string // SBXSIM_STATE: this test's sandboxes
	Home  string // HOME for sbxsim
	// Docker starts a dockerd in each sandbox (SBXSIM_DOCKER=1).
	Docker bool
	// Settings are further SBXSIM_* variables every run gets (NAME=value).
	Settings []string
}

// New returns a Sim with a fresh state directory whose sandboxes are all removed when
// the test ends (after the cleanups registered later, such as a workspace's TempDir: a
// test that must remove its sandboxes before those runs Run("rm", "-f", "--all") in a
// cleanup of its own). sbxsim makes namespaces: a test that is not root fails (the e2e
// tier runs as root; a missing prerequisite there is a failure, never a skip).
func New(t testing.TB, bin string, docker bool) *Sim {
	t.Helper()
	s := NewFresh(t, bin, docker)
	// sbx 0.55 refuses to start a sandbox until a network preset is chosen; allow-all is
	// the stance of the versions before it (no policy), which the tests were written
	// against. A test that changes it (deny-all and allow rules) does so itself.
	if r := s.RunWith([]string{"SBXSIM_VERSION=" + presetVersion}, "", "policy", "init", presetForTests); r.Code != 0 {
		t.Fatalf("choosing the network preset: %s", r)
	}
	return s
}

// presetForTests is the network preset New chooses: sbx before 0.55 let every
// connection out, and so does allow-all.
const presetForTests = "allow-all"

// presetVersion plays the first sbx with `policy` for that one run, so that a test
// whose Settings play an older version still gets the preset recorded for later ones.
const presetVersion = "0.55.0"

// NewFresh is New without a network preset: the state of a fresh sbx install, for the
// tests of what sbx 0.55 (and the product) do before `sbx policy init`.
func NewFresh(t testing.TB, bin string, docker bool) *Sim {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("this test runs sbxsim, which needs root (it creates namespaces); the e2e tier runs as root")
	}
	s := &Sim{T: t, Bin: bin, State: t.TempDir(), Home: os.Getenv("HOME"), Docker: docker}
	t.Cleanup(func() {
		// Cloud sandboxes (sbx --cloud) are kept apart, in the state's cloud/.
		for _, side := range []struct {
			dir  string
			args []string
		}{{"sandboxes", nil}, {"cloud/sandboxes", []string{"--cloud"}}} {
			if left, _ := os.ReadDir(filepath.Join(s.State, side.dir)); len(left) == 0 {
				continue // none made (a test may have signed sbx out, which refuses rm)
			}
			if r := s.Run(append(side.args, "rm", "-f", "--all")...); r.Code != 0 {
				t.Errorf("removing the test's sandboxes: %s", r)
			}
		}
	})
	return s
}

// Env is the environment sbxsim runs with: PATH, HOME, the state directory, the docker
// switch and Settings, then extra.
func (s *Sim) Env(extra ...string) []string {
	docker := "0"
	if s.Docker {
		docker = "1"
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.Home, "SBXSIM_STATE=" + s.State, "SBXSIM_DOCKER=" + docker}
	return append(append(env, s.Settings...), extra...)
}

// Result is the outcome of one run of sbxsim.
type Result struct {
	Stdout, Stderr string
	// Output is stdout and stderr as they were written, interleaved.
	Output string
	Code   int
}

func (r Result) String() string {
	return fmt.Sprintf("exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
}

// Run runs sbxsim with args. Only a failure to run it at all fails the test.
func (s *Sim) Run(args ...string) Result { return s.RunWith(nil, "", args...) }

// RunWith runs sbxsim with args, env added to Env and stdin as its input.
func (s *Sim) RunWith(env []string, stdin string, args ...string) Result {
	s.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Bin, args...)
	cmd.Env = s.Env(env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb, both testbin.SyncBuffer
	cmd.Stdout, cmd.Stderr = tee{&out, &both}, tee{&errb, &both}
	err := cmd.Run()
	r := Result{Stdout: out.String(), Stderr: errb.String(), Output: both.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	case err != nil:
		s.T.Fatalf("running sbxsim %v: %v", args, err)
	}
	return r
}

// Must runs sbxsim, fails the test unless it exits 0, and returns its stdout.
func (s *Sim) Must(args ...string) string {
	s.T.Helper()
	r := s.Run(args...)
	if r.Code != 0 {
		s.T.Fatalf("sbxsim %s: %s", strings.Join(args, " "), r)
	}
	return r.Stdout
}

// Sandboxes lists the names of the test's sandboxes (none when sbxsim cannot tell).
func (s *Sim) Sandboxes() []string {
	s.T.Helper()
	r := s.Run("ls", "--json")
	var ls struct {
		Sandboxes []struct {
			Name string `json:"name"`
		} `json:"sandboxes"`
	}
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &ls) != nil {
		return nil
	}
	var names []string
	for _, sb := range ls.Sandboxes {
		names = append(names, sb.Name)
	}
	return names
}

// StateFile is the path of a sandbox's state, which the simulator keeps as JSON.
func (s *Sim) StateFile(name string) string {
	return filepath.Join(s.State, "sandboxes", name, "state.json")
}

// InitPid is the host pid of a running sandbox's init (its PID namespace's first
// process): the way to the sandbox's processes from the host.
func (s *Sim) InitPid(name string) int {
	s.T.Helper()
	data, err := os.ReadFile(s.StateFile(name))
	if err != nil {
		s.T.Fatalf("reading the state of sandbox %s: %v", name, err)
	}
	var st struct {
		Init struct {
			Pid int `json:"pid"`
		} `json:"init"`
	}
	if err := json.Unmarshal(data, &st); err != nil || st.Init.Pid == 0 {
		s.T.Fatalf("sandbox %s: no init process in its state (%v)", name, err)
	}
	return st.Init.Pid
}

// tee writes to a stream's own buffer and to the interleaved one.
type tee struct{ own, both *testbin.SyncBuffer }

func (t tee) Write(p []byte) (int, error) {
	t.own.Write(p)
	return t.both.Write(p)
}
