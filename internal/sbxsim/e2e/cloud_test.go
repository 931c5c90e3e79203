//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// procStart is a live process's start time (field 22 of /proc/PID/stat), as sbxsim
// records it; an error once the process has ended (a zombie included).
func procStart(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return 0, fmt.Errorf("process %d has ended", pid)
	}
	var start uint64
	_, err = fmt.Sscan(f[19], &start)
	return start, err
}

// cloudSim is a sim whose cloud sandboxes are removed before newSim's cleanup looks for
// processes left behind.
func cloudSim(t *testing.T) *sim {
	t.Helper()
	s := newSim(t, false)
	t.Cleanup(func() {
		if r := s.run("--cloud", "rm", "-f", "--all"); r.code != 0 {
			t.Errorf("cleanup --cloud rm --all: %s", r)
		}
	})
	return s
}

// cloudCreate creates a cloud sandbox named after suffix, with extra create flags.
func (s *sim) cloudCreate(env []string, suffix string, flags ...string) string {
	s.t.Helper()
	name := s.name(suffix)
	args := append(append([]string{"--cloud", "create", "-q", "--name", name}, flags...), "shell")
	if r := s.runWith(env, "", args...); r.code != 0 {
		s.t.Fatalf("sbxsim %s: %s", strings.Join(args, " "), r)
	}
	return name
}

// cloudEntry is a sandbox of `--cloud ls --json`.
type cloudEntry struct {
	Name       string   `json:"name"`
	Status     string   `json:"status"`
	Workspaces []string `json:"workspaces"`
	Size       string   `json:"size"`
	OnTimeout  string   `json:"on_timeout"`
	TTLLeft    string   `json:"ttl_left"`
	URLs       []string `json:"urls"`
}

func (s *sim) cloudLs() map[string]cloudEntry {
	s.t.Helper()
	var ls struct {
		Sandboxes []cloudEntry `json:"sandboxes"`
	}
	if err := json.Unmarshal([]byte(s.must("--cloud", "ls", "--json")), &ls); err != nil {
		s.t.Fatalf("--cloud ls --json: %v", err)
	}
	out := map[string]cloudEntry{}
	for _, e := range ls.Sandboxes {
		out[e.Name] = e
	}
	return out
}

func TestCloudCreateRefusals(t *testing.T) {
	s := cloudSim(t)
	ws := t.TempDir()
	tests := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"a workspace path", nil, []string{"--cloud", "create", "--name", s.name("p"), "shell", ws},
			`ERROR: cloud sandboxes have no workspace mount: cannot mount "` + ws + `"`},
		{"run with a path", nil, []string{"--cloud", "run", "-d", "--name", s.name("p"), "shell", "."},
			"ERROR: cloud sandboxes have no workspace mount"},
		{"a period in the name", nil, []string{"--cloud", "create", "--name", "a.b", "shell"},
			`ERROR: invalid sandbox name "a.b": cloud sandbox names cannot contain periods`},
		{"an unknown size", nil, []string{"--cloud", "create", "--size", "huge", "shell"},
			`ERROR: invalid --size "huge": must be one of micro, small, medium, large, xl`},
		{"ttl 0", nil, []string{"--cloud", "create", "--ttl", "0", "shell"},
			`ERROR: invalid --ttl "0": the TTL must be greater than 0`},
		{"ttl past 24h", nil, []string{"--cloud", "create", "--ttl", "25h", "shell"},
			`ERROR: invalid --ttl "25h": the TTL is at most 24h`},
		{"an unknown on-timeout", nil, []string{"--cloud", "create", "--on-timeout", "pause", "shell"},
			`ERROR: invalid --on-timeout "pause": must be one of stop, restart, delete`},
		{"--cpus", nil, []string{"--cloud", "create", "--cpus", "2", "shell"},
			"ERROR: --cpus is not supported for cloud sandboxes"},
		{"--clone", nil, []string{"--cloud", "create", "--clone", "shell"},
			"ERROR: --clone is not supported for cloud sandboxes: they have no workspace mount"},
		{"--cloud before 0.45", []string{"SBXSIM_VERSION=0.44.0"}, []string{"--cloud", "ls"},
			"ERROR: unknown flag: --cloud"},
		{"ttl without --cloud", nil, []string{"ttl", "x", "+30m"}, `ERROR: unknown command "ttl" for "sbx"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.runWith(tc.env, "", tc.args...)
			if r.code != 1 || !strings.HasPrefix(r.stderr, tc.want) {
				t.Errorf("sbxsim %s: %s; want exit 1 and stderr starting %q", strings.Join(tc.args, " "), r, tc.want)
			}
		})
	}
	if left := s.cloudLs(); len(left) != 0 {
		t.Errorf("refused creates left cloud sandboxes: %v", left)
	}
}

func TestCloudSandboxesAreListedApart(t *testing.T) {
	s := cloudSim(t)
	local := s.create("local")
	cloud := s.cloudCreate(nil, "cloud", "--size", "micro")
	if got := s.must("ls", "-q"); got != local+"\n" {
		t.Errorf("ls -q = %q, want only the local %s", got, local)
	}
	if got := s.must("--cloud", "ls", "-q"); got != cloud+"\n" {
		t.Errorf("--cloud ls -q = %q, want only the cloud %s", got, cloud)
	}
	e, ok := s.cloudLs()[cloud]
	if !ok || e.Status != "running" || e.Size != "micro" || e.OnTimeout != "stop" || len(e.Workspaces) != 0 {
		t.Errorf("--cloud ls --json entry of %s = %+v; want running, micro, on timeout stop, no workspaces", cloud, e)
	}
	// The verbs of one side do not reach the other's sandboxes.
	for _, args := range [][]string{{"exec", cloud, "true"}, {"--cloud", "exec", local, "true"}} {
		if r := s.run(args...); r.code != 1 || !strings.Contains(r.stderr, "no sandbox named") {
			t.Errorf("sbxsim %s: %s; want no sandbox named", strings.Join(args, " "), r)
		}
	}
	s.must("--cloud", "rm", "-f", cloud)
	if got := s.must("ls", "-q"); got != local+"\n" {
		t.Errorf("after --cloud rm, ls -q = %q", got)
	}
}

func TestCloudSandboxStartsEmpty(t *testing.T) {
	s := cloudSim(t)
	secret := t.TempDir()
	if err := os.WriteFile(filepath.Join(secret, "host-file"), []byte("host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	name := s.cloudCreate(nil, "empty")
	tests := []struct {
		name string
		argv []string
		want string
	}{
		{"exec starts in the empty workspace", []string{"sh", "-c", "pwd; ls -A"}, "/home/agent/workspace\n"},
		{"home holds only the workspace", []string{"ls", "-A", "/home/agent"}, "workspace\n"},
		{"no host path is there", []string{"sh", "-c", "test -e " + secret + " && echo there || echo absent"}, "absent\n"},
		{"commands run as agent", []string{"id", "-un"}, "agent\n"},
		{"-w is the caller's", []string{"-w", "/tmp", "pwd"}, "/tmp\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--cloud", "exec", name}
			if tc.argv[0] == "-w" {
				args = []string{"--cloud", "exec", "-w", tc.argv[1], name}
				tc.argv = tc.argv[2:]
			}
			if got := s.must(append(args, tc.argv...)...); got != tc.want {
				t.Errorf("%v = %q, want %q", tc.argv, got, tc.want)
			}
		})
	}
}

func TestCloudCpInAndOut(t *testing.T) {
	s := cloudSim(t)
	name := s.cloudCreate(nil, "cp")
	host := t.TempDir()
	tree := filepath.Join(host, "proj")
	for p, body := range map[string]string{"a.txt": "A\n", "sub/b.txt": "B\n", "sub/deep/c.txt": "C\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(tree, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tree, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws := "/home/agent/workspace"
	s.must("--cloud", "cp", tree, name+":"+ws+"/proj")
	s.must("--cloud", "cp", filepath.Join(tree, "a.txt"), name+":/tmp/one.txt")
	// Point in time: a change on the host after the copy does not reach the sandbox.
	if err := os.WriteFile(filepath.Join(tree, "a.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := []struct{ path, want string }{
		{ws + "/proj/a.txt", "A\n"}, {ws + "/proj/sub/b.txt", "B\n"}, {ws + "/proj/sub/deep/c.txt", "C\n"}, {"/tmp/one.txt", "A\n"},
	}
	for _, tc := range in {
		if got := s.must("--cloud", "exec", name, "cat", tc.path); got != tc.want {
			t.Errorf("in the sandbox, %s = %q, want %q", tc.path, got, tc.want)
		}
	}
	s.must("--cloud", "exec", name, "sh", "-c", "mkdir -p out/x && echo made > out/x/m.txt && echo top > out/t.txt")
	back := filepath.Join(host, "back")
	s.must("--cloud", "cp", name+":"+ws+"/out", back)
	s.must("--cloud", "cp", name+":"+ws+"/out/t.txt", filepath.Join(host, "t-copy.txt"))
	out := []struct{ path, want string }{
		{filepath.Join(back, "x", "m.txt"), "made\n"}, {filepath.Join(back, "t.txt"), "top\n"}, {filepath.Join(host, "t-copy.txt"), "top\n"},
	}
	for _, tc := range out {
		if b, err := os.ReadFile(tc.path); err != nil || string(b) != tc.want {
			t.Errorf("on the host, %s = %q, %v; want %q", tc.path, b, err, tc.want)
		}
	}
	refused := []struct {
		args []string
		want string
	}{
		{[]string{"--cloud", "cp", tree, name + ":relative/dir"}, `ERROR: sandbox path "relative/dir" must be absolute`},
		{[]string{"--cloud", "cp", tree, "nosuch:/tmp/x"}, "ERROR: sandbox 'nosuch' not found"},
	}
	for _, tc := range refused {
		if r := s.run(tc.args...); r.code != 1 || !strings.HasPrefix(r.stderr, tc.want) {
			t.Errorf("sbxsim %s: %s; want exit 1, %q", strings.Join(tc.args, " "), r, tc.want)
		}
	}
}

func TestCloudExecFlags(t *testing.T) {
	s := cloudSim(t)
	name := s.cloudCreate(nil, "flags")
	tests := []struct {
		name  string
		args  []string
		stdin string
		code  int
		out   string // stdout on success, the start of stderr on failure
	}{
		{"-d refused", []string{"-d", name, "true"}, "", 1, "ERROR: --detach is not supported for exec"},
		{"-u refused", []string{"-u", "root", name, "id"}, "", 1, "ERROR: --user is not supported for cloud sandboxes"},
		{"--privileged refused", []string{"--privileged", name, "id"}, "", 1, "ERROR: --privileged is not supported for cloud sandboxes"},
		{"-i carries stdin", []string{"-i", name, "cat"}, "over the wire\n", 0, "over the wire\n"},
		{"-e is passed", []string{"-e", "K=v", name, "sh", "-c", "echo $K"}, "", 0, "v\n"},
		{"the status is the command's", []string{name, "sh", "-c", "exit 7"}, "", 7, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.runWith(nil, tc.stdin, append([]string{"--cloud", "exec"}, tc.args...)...)
			switch {
			case r.code != tc.code:
				t.Errorf("exit %d, want %d: %s", r.code, tc.code, r)
			case tc.code == 1 && !strings.HasPrefix(r.stderr, tc.out):
				t.Errorf("stderr %q, want it to start %q", r.stderr, tc.out)
			case tc.code == 0 && r.stdout != tc.out:
				t.Errorf("stdout %q, want %q", r.stdout, tc.out)
			}
		})
	}
}

// TestCloudRTTDelaysEveryMessage: with SBXSIM_CLOUD_RTT, a line sent into a persistent
// exec -i and its answer take at least one round trip, in order; an exec and a cp take
// at least one; and the RTT recorded at create applies when the variable is not set.
func TestCloudRTTDelaysEveryMessage(t *testing.T) {
	s := cloudSim(t)
	// Long enough to stand out of a plain exec's or cp's own time on a loaded machine.
	const rtt = time.Second
	rttEnv := []string{"SBXSIM_CLOUD_RTT=" + rtt.String()}
	name := s.cloudCreate(rttEnv, "rtt")
	plain := s.cloudCreate(nil, "plain")

	// One persistent channel, many messages: each answer comes a round trip after its
	// question, and answers come in order.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--cloud", "exec", "-i", name, "sh", "-c", `while read l; do echo "re:$l"; done`)
	cmd.Env = s.env() // no SBXSIM_CLOUD_RTT: the recorded one applies
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewReader(stdout)
	for i := range 3 {
		start := time.Now()
		fmt.Fprintf(stdin, "m%d\n", i)
		got, err := lines.ReadString('\n')
		took := time.Since(start)
		if err != nil || got != fmt.Sprintf("re:m%d\n", i) {
			t.Fatalf("answer %d = %q, %v (stderr %q)", i, got, err, stderr.String())
		}
		if took < rtt {
			t.Errorf("message %d answered in %v, less than the round trip %v", i, took, rtt)
		}
	}
	stdin.Close()
	if rest, _ := io.ReadAll(lines); len(rest) != 0 {
		t.Errorf("output after the last answer: %q", rest)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exec -i: %v (stderr %q)", err, stderr.String())
	}

	timed := []struct {
		name string
		env  []string
		args []string
		min  time.Duration
	}{
		{"exec pays a round trip", nil, []string{"--cloud", "exec", name, "true"}, rtt},
		{"the variable overrides the recorded RTT", rttEnv, []string{"--cloud", "exec", plain, "true"}, rtt},
		{"cp in pays a round trip", nil, []string{"--cloud", "cp", "/etc/hostname", name + ":/tmp/h"}, rtt},
		{"cp out pays a round trip", nil, []string{"--cloud", "cp", name + ":/tmp/h", filepath.Join(t.TempDir(), "h")}, rtt},
	}
	for _, tc := range timed {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			r := s.runWith(tc.env, "", tc.args...)
			if took := time.Since(start); r.code != 0 || took < tc.min {
				t.Errorf("sbxsim %s: %s in %v; want success in at least %v", strings.Join(tc.args, " "), r, took, tc.min)
			}
		})
	}
	// Without an RTT, the same exec is not held back by one (the control).
	start := time.Now()
	s.must("--cloud", "exec", plain, "true")
	if took := time.Since(start); took >= 3*rtt {
		t.Logf("an exec without RTT took %v (a loaded machine?)", took)
	}
}

// TestCloudQuota: eleven creates at once give exactly ten sandboxes and one quota
// error; a stopped sandbox frees a slot.
func TestCloudQuota(t *testing.T) {
	s := cloudSim(t)
	var wg sync.WaitGroup
	results := make([]result, 11)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = s.run("--cloud", "create", "-q", "--name", s.name(fmt.Sprintf("q%d", i)), "--size", "micro", "shell")
		}()
	}
	wg.Wait()
	ok, refused := 0, 0
	const quota = "ERROR: quota exceeded: your account can run at most 10 cloud sandboxes at once (10 running); stop or remove one first\n"
	for _, r := range results {
		switch {
		case r.code == 0:
			ok++
		case r.code == 1 && r.stderr == quota:
			refused++
		default:
			t.Errorf("create: %s", r)
		}
	}
	if ok != 10 || refused != 1 {
		t.Fatalf("%d created, %d refused with the quota error; want 10 and 1", ok, refused)
	}
	if r := s.run("--cloud", "create", "--name", s.name("late"), "shell"); r.code != 1 || r.stderr != quota {
		t.Errorf("an 11th create: %s; want %q", r, quota)
	}
	var stopped string
	for n := range s.cloudLs() {
		stopped = n
		break
	}
	s.must("--cloud", "stop", stopped)
	s.cloudCreate(nil, "late")
	// Ten run again: starting the stopped one (an exec starts it) is refused alike,
	// until another stops.
	if r := s.run("--cloud", "exec", stopped, "true"); r.code != 1 || r.stderr != quota {
		t.Errorf("starting an 11th by exec: %s; want %q", r, quota)
	}
	s.must("--cloud", "stop", s.name("late"))
	s.must("--cloud", "exec", stopped, "true")
}

// TestCloudTTL: the TTL ends on a clock SBXSIM_CLOUD_TTL_SCALE times faster, and
// on-timeout applies; ttl extends it up to 24h from creation.
func TestCloudTTL(t *testing.T) {
	s := cloudSim(t)
	fast := []string{"SBXSIM_CLOUD_TTL_SCALE=1800"} // 1h of TTL is 2 s
	tests := []struct {
		onTimeout string
		check     func(t *testing.T, name string, before int)
	}{
		{"stop", func(t *testing.T, name string, _ int) {
			waitCloud(t, s, name, func(e cloudEntry, ok bool) bool { return ok && e.Status == "stopped" })
			// The files are kept; an exec starts it again with a new TTL.
			if got := s.must("--cloud", "exec", name, "cat", "kept", "/proj/f"); got != "work\ndisk\n" {
				t.Errorf("after the timeout, kept and /proj/f = %q", got)
			}
			if e := s.cloudLs()[name]; e.Status != "running" || e.TTLLeft == "0s" {
				t.Errorf("after an exec, %+v; want running with a TTL again", e)
			}
		}},
		{"restart", func(t *testing.T, name string, before int) {
			waitCloud(t, s, name, func(e cloudEntry, ok bool) bool {
				return ok && e.Status == "running" && s.cloudInitPid(name) != before
			})
			if got := s.must("--cloud", "exec", name, "cat", "kept"); got != "work\n" {
				t.Errorf("after the restart, kept = %q", got)
			}
		}},
		{"delete", func(t *testing.T, name string, _ int) {
			waitCloud(t, s, name, func(_ cloudEntry, ok bool) bool { return !ok })
		}},
	}
	for _, tc := range tests {
		t.Run(tc.onTimeout, func(t *testing.T) {
			// 2h (4 s): room for the exec below on a loaded machine.
			name := s.cloudCreate(fast, tc.onTimeout, "--ttl", "2h", "--on-timeout", tc.onTimeout)
			before := s.cloudInitPid(name)
			// In the workspace, and outside /tmp and /home: the VM's whole disk is kept.
			s.must("--cloud", "exec", name, "sh", "-c", "echo work > kept && sudo -n mkdir -p /proj && echo disk | sudo -n tee /proj/f >/dev/null")
			tc.check(t, name, before)
		})
	}

	t.Run("a dead watcher's timeout applies at the next command", func(t *testing.T) {
		name := s.cloudCreate(fast, "sweep", "--ttl", "2h")
		b, err := os.ReadFile(filepath.Join(s.state, "cloud", "sandboxes", name, "autostop"))
		var watcher struct {
			Pid int `json:"pid"`
		}
		if err != nil || json.Unmarshal(b, &watcher) != nil || watcher.Pid <= 0 {
			t.Fatalf("the TTL watcher's record: %q, %v", b, err)
		}
		p, err := os.FindProcess(watcher.Pid)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Kill(); err != nil {
			t.Fatalf("killing the TTL watcher: %v", err)
		}
		time.Sleep(5 * time.Second) // past the TTL (4 s), with no watcher
		if e := s.cloudLs()[name]; e.Status != "stopped" || e.TTLLeft != "0s" {
			t.Errorf("after the TTL, with its watcher dead: %+v; want stopped", e)
		}
	})

	// The arming process records a watcher after starting it, under the sandbox's lock:
	// a watcher that looked for its record before then would find none and give up,
	// leaving the TTL unwatched (seen on a loaded machine). Here the record comes late,
	// the lock held meanwhile, as a descheduled arming process would.
	t.Run("a watcher waits for its record", func(t *testing.T) {
		name := s.cloudCreate(nil, "late", "--ttl", "2h")
		dir := filepath.Join(s.state, "cloud", "sandboxes", name)
		record := filepath.Join(dir, "autostop")
		var first struct {
			Pid int `json:"pid"`
		}
		b, err := os.ReadFile(record)
		if err != nil || json.Unmarshal(b, &first) != nil || first.Pid <= 0 {
			t.Fatalf("the TTL watcher's record: %q, %v", b, err)
		}
		lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer lock.Close()
		if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		if p, err := os.FindProcess(first.Pid); err == nil {
			_ = p.Kill()
		}
		watcher := exec.Command(bin, "__cloudttl", filepath.Join(s.state, "cloud"), name)
		if err := watcher.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- watcher.Wait() }()
		t.Cleanup(func() { _ = watcher.Process.Kill(); <-exited })
		time.Sleep(500 * time.Millisecond) // time enough to read a record and give up
		start, err := procStart(watcher.Process.Pid)
		if err != nil {
			t.Fatalf("the watcher before its record: %v", err)
		}
		if err := os.WriteFile(record, fmt.Appendf(nil, `{"pid":%d,"start":%d}`, watcher.Process.Pid, start), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := unix.Flock(int(lock.Fd()), unix.LOCK_UN); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-exited:
			t.Fatalf("the watcher gave up (%v): the TTL is watched by nobody", err)
		case <-time.After(time.Second):
		}
	})

	t.Run("ttl extends up to 24h", func(t *testing.T) {
		name := s.cloudCreate(fast, "ext", "--ttl", "2h")
		s.must("--cloud", "ttl", name, "+4h") // 6h from creation: 12 s
		time.Sleep(5 * time.Second)           // past the first two hours (4 s)
		if e := s.cloudLs()[name]; e.Status != "running" {
			t.Errorf("after extending, at 2.5h of 6h: %+v; want running", e)
		}
		r := s.run("--cloud", "ttl", name, "+19h")
		if want := "ERROR: cannot set the TTL of sandbox '" + name + "' to +19h: a cloud sandbox lives at most 24h from its creation"; r.code != 1 || !strings.HasPrefix(r.stderr, want) {
			t.Errorf("extending past 24h: %s; want %q", r, want)
		}
		var got struct {
			Lifetime string `json:"lifetime"`
		}
		if err := json.Unmarshal([]byte(s.must("--cloud", "ttl", name, "--json")), &got); err != nil || got.Lifetime != "6h0m0s" {
			t.Errorf("ttl --json lifetime = %q, %v; want 6h0m0s (the refused extension changed nothing)", got.Lifetime, err)
		}
	})
}

// waitCloud waits (up to 20 s) until ok holds of the sandbox's --cloud ls entry.
func waitCloud(t *testing.T, s *sim, name string, ok func(cloudEntry, bool) bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		e, found := s.cloudLs()[name]
		if ok(e, found) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sandbox %s: still %+v (listed: %v) after 20 s", name, e, found)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// cloudInitPid is the pid of a cloud sandbox's init, 0 while it has none.
func (s *sim) cloudInitPid(name string) int {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.state, "cloud", "sandboxes", name, "state.json"))
	if err != nil {
		return 0
	}
	var st struct {
		Init *struct {
			Pid int `json:"pid"`
		} `json:"init"`
	}
	if json.Unmarshal(b, &st) != nil || st.Init == nil {
		return 0
	}
	return st.Init.Pid
}

// TestCloudPublishGivesAnHTTPSURL: a port published in a cloud sandbox (ports
// --publish, and port publish at 0.55) is a public https URL, served by sbxsim's TLS
// front with a certificate of its test CA (SBXSIM_CLOUD_CA, or the state's
// cloud/ca.pem), proxied to the sandbox's port; plain HTTP and a client that does not
// trust the CA get nothing.
func TestCloudPublishGivesAnHTTPSURL(t *testing.T) {
	s := cloudSim(t)
	givenCA := filepath.Join(t.TempDir(), "test-ca.pem")
	tests := []struct {
		name    string
		env     []string
		publish []string // after the sandbox's name
		ca      string
	}{
		{"ports --publish, the default CA", nil, []string{"--publish", "8080/tcp"}, filepath.Join(s.state, "cloud", "ca.pem")},
		{"port publish at 0.55, SBXSIM_CLOUD_CA", []string{"SBXSIM_VERSION=0.55.0", "SBXSIM_CLOUD_CA=" + givenCA}, []string{"8080"}, givenCA},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := s.cloudCreate(tc.env, fmt.Sprintf("web%d", i))
			if r := s.runWith(tc.env, "", "--cloud", "exec", name, "sh", "-c",
				"mkdir -p /tmp/www && echo served-in-the-cloud > /tmp/www/index.html && busybox httpd -p 8080 -h /tmp/www"); r.code != 0 {
				t.Fatalf("starting httpd: %s", r)
			}
			args := append([]string{"--cloud", "ports", name}, tc.publish...)
			if strings.Contains(tc.name, "port publish") {
				args = append([]string{"--cloud", "port", "publish", name}, tc.publish...)
			}
			r := s.runWith(tc.env, "", append(args, "--json")...)
			var ports []struct {
				SandboxPort int    `json:"sandbox_port"`
				URL         string `json:"url"`
			}
			if r.code != 0 || json.Unmarshal([]byte(r.stdout), &ports) != nil || len(ports) != 1 {
				t.Fatalf("publishing: %s", r)
			}
			url := ports[0].URL
			if ports[0].SandboxPort != 8080 || !strings.HasPrefix(url, "https://") {
				t.Fatalf("published %+v; want 8080 with an https URL", ports[0])
			}
			if !strings.Contains(r.stderr, tc.ca) {
				t.Errorf("the publish's note %q does not name the CA %s", r.stderr, tc.ca)
			}
			if got := s.cloudLs()[name].URLs; len(got) != 1 || got[0] != url {
				t.Errorf("--cloud ls urls = %v, want [%s]", got, url)
			}
			pem, err := os.ReadFile(tc.ca)
			if err != nil {
				t.Fatalf("the test CA: %v", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				t.Fatalf("%s holds no certificate", tc.ca)
			}
			trusting := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
			resp, err := trusting.Get(url + "/")
			if err != nil {
				t.Fatalf("GET %s trusting the CA: %v", url, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) != "served-in-the-cloud\n" {
				t.Errorf("GET %s = %q", url, body)
			}
			if _, err := httpGetWithin(url+"/", 5*time.Second); err == nil || !strings.Contains(err.Error(), "certificate") {
				t.Errorf("GET %s with the system's roots: %v; want a certificate error", url, err)
			}
			assertUnreachable(t, "http://"+strings.TrimPrefix(url, "https://")+"/", "the URL speaks TLS only")
		})
	}
}
