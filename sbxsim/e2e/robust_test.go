package e2e

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestConcurrentCreates races several creates for the same default name: each gets its
// own name, sandbox and address.
func TestConcurrentCreates(t *testing.T) {
	s := newSim(t, false)
	ws := filepath.Join(t.TempDir(), s.name("race"))
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	const n = 4
	names := make([]string, n)
	var wg sync.WaitGroup
	for i := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := s.run("create", "-q", "shell", ws)
			if r.code != 0 {
				t.Errorf("concurrent create: %s", r)
			}
			names[i] = strings.TrimSpace(r.stdout)
		}()
	}
	wg.Wait()
	sort.Strings(names)
	base := "shell-" + filepath.Base(ws)
	want := []string{base, base + "-2", base + "-3", base + "-4"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("names = %v, want %v", names, want)
	}
	ips := map[string]bool{}
	for _, name := range names {
		if got := s.must("exec", name, "hostname"); got != name+"\n" {
			t.Errorf("hostname in %s = %q", name, got)
		}
		ips[s.stateOf(name).Net.SandboxIP] = true
	}
	if len(ips) != n {
		t.Errorf("sandboxes share addresses: %v", ips)
	}
}

// TestCrashedAndStuckInit: a sandbox whose init was killed behind sbxsim's back is
// restarted by the next exec; one whose init does not react to SIGTERM (stopped with
// SIGSTOP) is still removed, by SIGKILL.
func TestCrashedAndStuckInit(t *testing.T) {
	s := newSim(t, false)
	name := s.create("crash", t.TempDir())
	st := s.stateOf(name)
	if err := syscall.Kill(st.Init.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if got := s.must("exec", name, "echo", "back"); got != "back\n" {
		t.Errorf("exec after init was killed = %q", got)
	}
	st2 := s.stateOf(name)
	if st2.Init.Pid == st.Init.Pid {
		t.Errorf("restart after a crash: before %+v, after %+v", *st.Init, *st2.Init)
	}

	st = st2
	if err := syscall.Kill(st.Init.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	s.must("rm", "-f", name)
	assertGone(t, st)
}
