//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
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
	// The crash is complete once the init is gone (or a zombie); an exec racing with
	// the kill itself could still enter the dying namespaces and be killed with them.
	for i := 0; ; i++ {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", st.Init.Pid)); err != nil || strings.Contains(string(b), ") Z ") {
			break
		}
		if i == 1000 {
			t.Fatalf("init %d still alive 10 s after SIGKILL", st.Init.Pid)
		}
		time.Sleep(10 * time.Millisecond)
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

// TestFailedStartLeavesNothing: a start that fails half-way (its fixed host port was
// taken while the sandbox was stopped) reports sbx's runtime error and ends the init,
// veth and proxies it had started; a failed create leaves no sandbox.
func TestFailedStartLeavesNothing(t *testing.T) {
	s := newSim(t, false)
	ws := t.TempDir()
	name := s.create("fail", ws)
	// Find a free port, publish it, stop, then hold it on the host.
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	// The ephemeral one comes first, so the failing start has a proxy to clean up.
	s.ports(name, "--publish", "7001", "--publish", fmt.Sprintf("%d:7000", port))
	st := s.stateOf(name)
	s.must("stop", name)
	hold, err := net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()

	r := s.run("exec", name, "true")
	if r.code != 1 || !strings.Contains(r.stderr, "ERROR: failed to start sandbox") || !strings.Contains(r.stderr, "port is already allocated") {
		t.Errorf("exec with its host port taken: %s", r)
	}
	if !strings.Contains(s.must("ls"), "stopped") {
		t.Error("sandbox not stopped after a failed start")
	}
	if out := psLines(t, "__proxy"); strings.Contains(out, ":7001") || strings.Contains(out, ":7000") {
		t.Errorf("proxies left by the failed start:\n%s", out)
	}
	if out := psLines(t, "__init "+name+" "+s.state); out != "" {
		t.Errorf("init left by the failed start:\n%s", out)
	}
	if out, _ := exec.Command("ip", "-o", "link").Output(); strings.Contains(string(out), st.Net.Veth+"@") {
		t.Errorf("veth %s left by the failed start", st.Net.Veth)
	}
	hold.Close()
	if got := s.must("exec", name, "echo", "ok"); got != "ok\n" {
		t.Errorf("exec once the port is free = %q", got)
	}
}
