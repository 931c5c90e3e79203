//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

func TestWorkspaceIsSharedBothWays(t *testing.T) {
	s := newSim(t, false)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "from-host"), []byte("host says hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	name := s.create("ws", ws)

	// The primary workspace is the default workdir, at the host's absolute path.
	if got := s.must("exec", name, "pwd"); got != ws+"\n" {
		t.Errorf("pwd = %q, want %q", got, ws+"\n")
	}
	if got := s.must("exec", name, "cat", filepath.Join(ws, "from-host")); got != "host says hi\n" {
		t.Errorf("host file read inside = %q", got)
	}
	s.must("exec", name, "sh", "-c", "echo sandbox says hi > from-sandbox")
	b, err := os.ReadFile(filepath.Join(ws, "from-sandbox"))
	if err != nil || string(b) != "sandbox says hi\n" {
		t.Errorf("file written inside, read on host: %q, %v", b, err)
	}
}

func TestReadOnlyWorkspace(t *testing.T) {
	s := newSim(t, false)
	ws, ro := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ro, "data"), []byte("ro data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	name := s.create("ro", ws, ro+":ro")
	if got := s.must("exec", name, "cat", filepath.Join(ro, "data")); got != "ro data\n" {
		t.Errorf("read of :ro workspace = %q", got)
	}
	r := s.run("exec", name, "sh", "-c", "echo x > "+filepath.Join(ro, "new"))
	if r.code == 0 || !strings.Contains(r.stderr, "Read-only file system") {
		t.Errorf("write to :ro workspace: %s; want failure with Read-only file system", r)
	}
	if _, err := os.Stat(filepath.Join(ro, "new")); err == nil {
		t.Error("write to :ro workspace reached the host")
	}
}

func TestCreateArguments(t *testing.T) {
	s := newSim(t, false)
	ws := t.TempDir()
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"read-only primary", []string{"create", "shell", ws + ":ro"}, "ERROR: primary workspace must be read/write (remove ':ro' or ':readonly')"},
		{"readonly primary", []string{"create", "shell", ws + ":readonly"}, "ERROR: primary workspace must be read/write (remove ':ro' or ':readonly')"},
		{"name too short", []string{"create", "--name", "a", "shell", ws}, "between 2 and 63"},
		{"underscore", []string{"create", "--name", "a_b", "shell", ws}, "only letters, numbers, hyphens and periods"},
		{"leading hyphen", []string{"create", "--name=-ab", "shell", ws}, "start and end"},
		{"reserved", []string{"create", "--name", "default", "shell", ws}, "reserved"},
		{"unknown agent", []string{"create", "nosuchagent", ws}, "unknown agent"},
		{"missing path", []string{"create", "shell", filepath.Join(ws, "nope")}, "no such file"},
		{"small memory", []string{"create", "-m", "100m", "shell", ws}, "512 MiB"},
		{"no agent", []string{"create"}, "requires at least 1 argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.run(tt.args...)
			if r.code != 1 || !strings.Contains(r.stderr, tt.wantErr) {
				t.Errorf("%v: %s; want exit 1 with %q", tt.args, r, tt.wantErr)
			}
		})
	}
	if got := s.must("ls", "-q"); got != "" {
		t.Errorf("failed creates left sandboxes: %q", got)
	}
}

func TestDefaultNameAndCollision(t *testing.T) {
	s := newSim(t, false)
	ws := filepath.Join(t.TempDir(), s.name("proj"))
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	first := strings.TrimSpace(s.must("create", "-q", "shell", ws))
	if want := "shell-" + filepath.Base(ws); first != want {
		t.Errorf("default name = %q, want %q", first, want)
	}
	r := s.run("create", "-q", "shell", ws)
	if r.code != 0 || strings.TrimSpace(r.stdout) != first+"-2" || !strings.Contains(r.stderr, "already exists for this workspace") {
		t.Errorf("second create on the same workspace: %s", r)
	}
	r = s.run("create", "--name", first, "shell", ws)
	if r.code != 1 || !strings.Contains(r.stderr, "already exists") {
		t.Errorf("explicit duplicate name: %s", r)
	}
	// Mountless: no path; the workdir is the sandbox user's home.
	name := s.name("nomount")
	s.must("create", "--name", name, "shell")
	if got := s.must("exec", name, "pwd"); got != "/home/agent\n" {
		t.Errorf("mountless workdir = %q", got)
	}
}

func TestExecExitCodesAndErrors(t *testing.T) {
	s := newSim(t, false)
	name := s.create("exit", t.TempDir())
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"success", []string{"exec", name, "true"}, 0, ""},
		{"exit 1", []string{"exec", name, "sh", "-c", "exit 1"}, 1, ""},
		{"exit 42", []string{"exec", name, "--", "sh", "-c", "exit 42"}, 42, ""},
		{"not found", []string{"exec", name, "no-such-command-xyz"}, 127, ""},
		{"killed by a signal", []string{"exec", name, "sh", "-c", "kill -9 $$"}, 128 + 9, ""},
		{"terminated in a tty", []string{"exec", "-t", name, "sh", "-c", "kill -15 $$"}, 128 + 15, ""},
		{"missing sandbox", []string{"exec", s.name("none"), "true"}, 1, "ERROR: no sandbox named '" + s.name("none") + "'"},
		{"detach", []string{"exec", "-d", name, "true"}, 1, "--detach is not supported for exec; omit -d to run the command in the foreground"},
		{"no command", []string{"exec", name}, 1, "requires at least 2 arguments"},
		{"relative workdir", []string{"exec", "-w", "rel", name, "true"}, 1, "not an absolute path"},
		{"name that is a path", []string{"exec", "../" + name, "true"}, 1, "ERROR: no sandbox named '../" + name + "'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.run(tt.args...)
			if r.code != tt.wantCode || !strings.Contains(r.stderr, tt.wantStderr) {
				t.Errorf("%v: %s; want exit %d with %q", tt.args, r, tt.wantCode, tt.wantStderr)
			}
		})
	}
}

func TestExecEnvironmentIsOnlyWhatIsPassed(t *testing.T) {
	s := newSim(t, false)
	name := s.create("env", t.TempDir())
	envFile := filepath.Join(t.TempDir(), "env")
	if err := os.WriteFile(envFile, []byte("# comment\nFROM_FILE=f\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	caller := []string{"DOCKER_HOST=tcp://10.0.0.1:2375", "SECRET_TOKEN=hunter2", "PASSED_BY_NAME=yes"}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"plain", []string{"exec", name, "env"}, []string{"HOME=/home/agent", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SSH_AUTH_SOCK=/run/host-services/ssh-auth.sock"}},
		{"flags", []string{"exec", "-e", "A=1", "--env=B=two words", "-e", "PASSED_BY_NAME", "--env-file", envFile, name, "env"},
			[]string{"A=1", "B=two words", "FROM_FILE=f", "HOME=/home/agent", "PASSED_BY_NAME=yes", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SSH_AUTH_SOCK=/run/host-services/ssh-auth.sock"}},
		{"tty adds TERM", []string{"exec", "-t", name, "env"}, []string{"HOME=/home/agent", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SSH_AUTH_SOCK=/run/host-services/ssh-auth.sock", "TERM=xterm-256color"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.runWith(caller, "", tt.args...)
			if r.code != 0 {
				t.Fatalf("%v: %s", tt.args, r)
			}
			got := strings.Split(strings.TrimSpace(strings.ReplaceAll(r.stdout, "\r", "")), "\n")
			sort.Strings(got)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("environment inside:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestHostSecretsAreHidden(t *testing.T) {
	s := newSim(t, false)
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	// A marker in the host's ~/.ssh, removed afterwards (with ~/.ssh if we made it).
	ssh := filepath.Join(home, ".ssh")
	if _, err := os.Stat(ssh); os.IsNotExist(err) {
		if err := os.Mkdir(ssh, 0o700); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(ssh) })
	}
	marker := filepath.Join(ssh, "sbxsim-e2e-marker-"+s.name("key"))
	if err := os.WriteFile(marker, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(marker) })

	name := s.create("hidden", t.TempDir())
	for _, p := range []string{marker, ssh, "/run/docker.sock", "/var/run/docker.sock", s.state} {
		if r := s.run("exec", name, "test", "-e", p); r.code != 1 {
			t.Errorf("%s is visible inside the sandbox (test -e: %s)", p, r)
		}
	}
	for d, want := range map[string]string{"/root": "", "/home": "agent\n", "/run": ""} {
		if got := s.must("exec", "-u", "root", name, "ls", "-A", d); got != want {
			t.Errorf("%s inside the sandbox holds %q, want %q", d, got, want)
		}
	}
}

func TestExecInteractiveAndTTY(t *testing.T) {
	s := newSim(t, false)
	name := s.create("io", t.TempDir())
	if r := s.runWith(nil, "through stdin\n", "exec", "-i", name, "cat"); r.code != 0 || r.stdout != "through stdin\n" {
		t.Errorf("exec -i cat: %s", r)
	}
	// Without -i the command's stdin is empty, as with docker exec.
	if r := s.runWith(nil, "ignored\n", "exec", name, "cat"); r.code != 0 || r.stdout != "" {
		t.Errorf("exec cat without -i: %s", r)
	}
	r := s.run("exec", "-t", name, "sh", "-c", "tty; exit 5")
	if r.code != 5 || !strings.HasPrefix(r.stdout, "/dev/pts/") {
		t.Errorf("exec -t tty: %s; want a /dev/pts terminal and exit 5", r)
	}
	if r := s.runWith(nil, "typed\n", "exec", "-it", name, "head", "-n1"); r.code != 0 || !strings.Contains(r.stdout, "typed") {
		t.Errorf("exec -it head -n1: %s", r)
	}
}

func TestConcurrentExecsAndSandboxes(t *testing.T) {
	s := newSim(t, false)
	var names, dirs []string
	for _, n := range []string{"c1", "c2"} {
		d := t.TempDir()
		dirs = append(dirs, d)
		names = append(names, s.create(n, d))
	}
	var wg sync.WaitGroup
	errs := make(chan string, 32)
	for i := 0; i < 8; i++ {
		for _, name := range names {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := s.run("exec", name, "sh", "-c", "echo "+name+" > f"+string(rune('a'+i))+"; hostname")
				if r.code != 0 || r.stdout != name+"\n" {
					errs <- name + ": " + r.String()
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	for _, d := range dirs {
		ents, _ := os.ReadDir(d)
		if len(ents) != 8 {
			t.Errorf("%s has %d files, want 8", d, len(ents))
		}
	}
}

// sleeper is a command line no other test on the machine runs ("sleep 1000" matched
// another package's "sleep 100000").
var sleeper = "sleep 1000." + itoa(os.Getpid())

func TestStopStartAndRemoveLeaveNothing(t *testing.T) {
	s := newSim(t, false)
	ws := t.TempDir()
	name := s.create("life", ws)
	st := s.stateOf(name)
	s.must("exec", name, "sh", "-c", sleeper+" > /dev/null 2>&1 &")
	if out := psLines(t, sleeper); out == "" {
		t.Fatal("background process inside not visible from the host")
	}

	s.must("stop", name)
	if !strings.Contains(s.must("ls"), "stopped") {
		t.Errorf("ls after stop: %s", s.must("ls"))
	}
	assertGone(t, st)
	// exec starts a stopped sandbox first; the workspace is still there.
	if got := s.must("exec", name, "sh", "-c", "echo restarted > again; cat again"); got != "restarted\n" {
		t.Errorf("exec after stop = %q", got)
	}
	st = s.stateOf(name)
	s.must("exec", name, "sh", "-c", sleeper+" > /dev/null 2>&1 &")

	s.must("rm", "--force", name) // sbx 0.55 asks without --force
	assertGone(t, st)
	if _, err := os.Stat(filepath.Join(s.state, "sandboxes", name)); !os.IsNotExist(err) {
		t.Errorf("state of %s left after rm: %v", name, err)
	}
	if got := s.must("ls", "-q"); got != "" {
		t.Errorf("ls after rm: %q", got)
	}
	if r := s.run("exec", name, "true"); r.code != 1 || !strings.Contains(r.stderr, "no sandbox named") {
		t.Errorf("exec after rm: %s", r)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "again")); string(b) != "restarted\n" {
		t.Errorf("rm touched the workspace: %q", b)
	}
}

// assertGone checks from the host that a sandbox run left nothing: no init, no process
// in its namespaces (so the namespaces are gone), no veth.
func assertGone(t *testing.T, st sandboxState) {
	t.Helper()
	if st.Init == nil || st.Net == nil || len(st.namespaces) != 5 {
		t.Fatalf("state has no init/net/namespaces: %+v", st)
	}
	if hits := namespaceUsers(t, st.namespaces); len(hits) > 0 {
		t.Errorf("processes still in the sandbox's namespaces:\n%s", strings.Join(hits, "\n"))
	}
	if out := psLines(t, sleeper); out != "" {
		t.Errorf("sandbox processes still running:\n%s", out)
	}
	if b, err := os.ReadFile("/proc/" + itoa(st.Init.Pid) + "/stat"); err == nil && !strings.Contains(string(b), ") Z") {
		t.Errorf("init %d still alive: %s", st.Init.Pid, b)
	}
	out, err := exec.Command("ip", "-o", "link").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), st.Net.Veth+"@") || strings.Contains(string(out), st.Net.Veth+":") {
		t.Errorf("veth %s still present:\n%s", st.Net.Veth, out)
	}
	if out, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(out), "sbxsim") {
		t.Errorf("ip netns lists sbxsim namespaces:\n%s", out)
	}
}
