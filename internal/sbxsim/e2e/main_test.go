//go:build e2e

// Package e2e proves sbxsim's properties from the outside: it builds the binary, runs it
// as root like CI does, and checks namespaces, mounts, veths and processes with the
// host's own tools.
package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
	"github.com/pi-sbx/pi-sbx-backend/internal/testsim"
)

// bin is the sbxsim binary built once for the whole package.
var bin string

func TestMain(m *testing.M) {
	testbin.Main(m, "", map[*string]string{&bin: "./cmd/sbxsim"})
}

// sim is one test's sbxsim world: its own state directory and environment.
type sim struct {
	t      testing.TB
	sims   *testsim.Sim
	state  string // sims.State
	prefix string
}

// newSim returns a sim whose sandboxes are all removed when the test ends, and checks
// that they left nothing behind. Tests need root: CI runs as root, so not being root is
// a failure, not a skip.
func newSim(t testing.TB, docker bool) *sim {
	t.Helper()
	return wrapSim(t, testsim.New(t, bin, docker))
}

// newFreshSim is newSim with no network preset chosen: a fresh install of sbx 0.55.
func newFreshSim(t testing.TB, docker bool) *sim {
	t.Helper()
	return wrapSim(t, testsim.NewFresh(t, bin, docker))
}

func wrapSim(t testing.TB, sims *testsim.Sim) *sim {
	t.Helper()
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(t.Name()))
	s := &sim{t: t, sims: sims, state: sims.State, prefix: fmt.Sprintf("e2e%d-%s", os.Getpid()%100000, clean)}
	if len(s.prefix) > 40 {
		s.prefix = s.prefix[:40]
	}
	t.Cleanup(func() {
		if r := s.run("rm", "-f", "--all"); r.code != 0 {
			t.Errorf("cleanup rm --all: %s", r)
		}
		if out := psLines(t, s.state); out != "" {
			t.Errorf("processes of %s left after rm --all:\n%s", s.state, out)
		}
	})
	return s
}

// name returns a sandbox name unique to this test run.
func (s *sim) name(suffix string) string { return strings.Trim(s.prefix, "-.") + "-" + suffix }

type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
}

// env is the environment sbxsim runs with: the state directory, the docker switch,
// and whatever extra the test adds (to prove it does not leak).
func (s *sim) env(extra ...string) []string { return s.sims.Env(extra...) }

// run runs sbxsim with args and returns its outcome; it never fails the test itself.
func (s *sim) run(args ...string) result { return s.runWith(nil, "", args...) }

func (s *sim) runWith(env []string, stdin string, args ...string) result {
	s.t.Helper()
	r := s.sims.RunWith(env, stdin, args...)
	return result{stdout: r.Stdout, stderr: r.Stderr, code: r.Code}
}

// must runs sbxsim and fails the test unless it exits 0; it returns stdout.
func (s *sim) must(args ...string) string {
	s.t.Helper()
	r := s.run(args...)
	if r.code != 0 {
		s.t.Fatalf("sbxsim %s: %s", strings.Join(args, " "), r)
	}
	return r.stdout
}

// create creates a sandbox named after suffix for the shell agent on the given paths.
func (s *sim) create(suffix string, paths ...string) string {
	s.t.Helper()
	name := s.name(suffix)
	s.must(append([]string{"create", "-q", "--name", name, "shell"}, paths...)...)
	return name
}

// sandboxState is the part of sbxsim's state file the tests look at from outside.
type sandboxState struct {
	Init *struct {
		Pid int `json:"pid"`
	} `json:"init"`
	Net *struct {
		Veth      string `json:"veth"`
		SandboxIP string `json:"sandboxIP"`
	} `json:"net"`
	// namespaces are the init's namespace links (e.g. "net:[4026532290]"), read from
	// /proc while it runs, to look for them again after stop or rm. Each is held open
	// until the test ends: a freed namespace's number is soon reused (by another
	// sandbox on a shared machine), and a pinned one cannot be.
	namespaces []string
}

func (s *sim) stateOf(name string) sandboxState {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.state, "sandboxes", name, "state.json"))
	if err != nil {
		s.t.Fatalf("reading state of %s: %v", name, err)
	}
	var st sandboxState
	if err := json.Unmarshal(b, &st); err != nil {
		s.t.Fatal(err)
	}
	if st.Init != nil {
		for _, ns := range []string{"mnt", "pid", "uts", "ipc", "net"} {
			p := fmt.Sprintf("/proc/%d/ns/%s", st.Init.Pid, ns)
			pin, err := os.Open(p)
			if err != nil {
				continue
			}
			s.t.Cleanup(func() { pin.Close() })
			if l, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", pin.Fd())); err == nil {
				st.namespaces = append(st.namespaces, l)
			}
		}
	}
	return st
}

// namespaceUsers lists the live processes that are in any of the given namespaces. A
// dead init waiting to be reaped still shows its PID namespace; it runs nothing and goes
// when the host's pid 1 reaps it, so zombies are left out.
func namespaceUsers(t testing.TB, namespaces []string) []string {
	t.Helper()
	want := map[string]bool{}
	for _, n := range namespaces {
		want[n] = true
	}
	links, _ := filepath.Glob("/proc/[0-9]*/ns/*")
	var hits []string
	for _, l := range links {
		target, err := os.Readlink(l)
		if err != nil || !want[target] {
			continue
		}
		if isZombie(filepath.Dir(filepath.Dir(l))) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(l)), "cmdline"))
		stat, _ := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(l)), "stat"))
		hits = append(hits, fmt.Sprintf("%s -> %s (%q; %.60s)", l, target, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}), stat))
	}
	return hits
}

// psLines lists live processes whose command line mentions substr, one "pid args" line
// each, read from /proc like ps does. Zombies are left out: a host whose pid 1 does not
// reap orphans keeps them as <defunct> entries, holding nothing.
func psLines(t testing.TB, substr string) string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	var hits []string
	for _, d := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue
		}
		args := strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))
		if !strings.Contains(args, substr) || isZombie(d) {
			continue
		}
		hits = append(hits, filepath.Base(d)+" "+args)
	}
	return strings.Join(hits, "\n")
}

// isZombie reports whether the process at /proc/<pid> has exited but not been reaped.
func isZombie(procDir string) bool {
	stat, err := os.ReadFile(filepath.Join(procDir, "stat"))
	return err == nil && strings.Contains(string(stat), ") Z ")
}

func itoa(i int) string { return fmt.Sprint(i) }
