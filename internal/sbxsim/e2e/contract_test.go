//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests prove, from the outside, that sbxsim does what real sbx does at its hard
// edges (the contract table, internal/host/sbx/contract.go), each on by default.

// TestCommandsRunAsAgent: exec runs as agent (UID 1000, HOME=/home/agent) with a
// passwordless sudo; agent owns the workspace inside, and what it creates is the
// workspace owner's on the host.
func TestCommandsRunAsAgent(t *testing.T) {
	s := newSim(t, false)
	ws := t.TempDir()
	name := s.create("agent", ws)
	got := s.must("exec", name, "sh", "-c", `id -u; id -g; id -Gn; echo $HOME; stat -c %U .; touch a; sudo -n id -u; sudo touch b`)
	want := "1000\n1000\nagent sudo docker\n/home/agent\nagent\n0\n"
	if got != want {
		t.Errorf("inside: %q, want %q", got, want)
	}
	var wsSt, a syscall.Stat_t
	if err := syscall.Stat(ws, &wsSt); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Stat(filepath.Join(ws, "a"), &a); err != nil {
		t.Fatal(err)
	}
	if a.Uid != wsSt.Uid || a.Gid != wsSt.Gid {
		t.Errorf("agent's file is %d:%d on the host, the workspace owner is %d:%d", a.Uid, a.Gid, wsSt.Uid, wsSt.Gid)
	}
	if got := s.must("exec", "-u", "root", name, "id", "-u"); got != "0\n" {
		t.Errorf("exec -u root: id -u = %q", got)
	}
}

// TestAutoStop: a sandbox stops SBXSIM_AUTOSTOP after its last session, not while one
// is open; a stop ends processes and keeps /tmp; exec starts it again.
func TestAutoStop(t *testing.T) {
	s := newSim(t, false)
	name := s.name("autostop")
	if r := s.runWith([]string{"SBXSIM_AUTOSTOP=1s"}, "", "create", "-q", "--name", name, "shell", t.TempDir()); r.code != 0 {
		t.Fatal(r)
	}
	status := func() string {
		var ls struct {
			Sandboxes []struct{ Name, Status string } `json:"sandboxes"`
		}
		if err := json.Unmarshal([]byte(s.must("ls", "--json")), &ls); err != nil {
			t.Fatal(err)
		}
		for _, sb := range ls.Sandboxes {
			if sb.Name == name {
				return sb.Status
			}
		}
		return "missing"
	}
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for status() != want {
			if time.Now().After(deadline) {
				t.Fatalf("sandbox still %s, want %s", status(), want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFor("stopped") // after create, with no session
	// A session longer than the auto-stop keeps it running; a background process dies
	// with the stop, /tmp stays.
	s.must("exec", name, "sh", "-c", "echo kept > /tmp/f; setsid sleep 600 >/dev/null 2>&1 & sleep 2; test \"$(cat /tmp/f)\" = kept")
	if got := status(); got != "running" {
		t.Fatalf("just after a session: %s", got)
	}
	waitFor("stopped")
	if got := s.must("exec", name, "sh", "-c", "cat /tmp/f; pgrep -x sleep || echo none"); got != "kept\nnone\n" {
		t.Errorf("after the auto-stop: %q, want /tmp kept and no sleep", got)
	}
	if r := s.run("ports", name, "--json"); status() == "stopped" && strings.TrimSpace(r.stdout) != "No published ports" {
		t.Errorf("ports of a stopped sandbox: %s", r)
	}
}

// TestDaemonBannerAndSignIn: after `daemon stop` the first command prints sandboxd's
// banner on stdout before its output, once; signed out, every sandbox verb fails with
// real sbx's message and exit 1, and login brings them back.
func TestDaemonBannerAndSignIn(t *testing.T) {
	s := newSim(t, false)
	name := s.create("banner", t.TempDir())
	s.must("daemon", "stop")
	if got := strings.TrimSpace(s.must("daemon", "status")); got != "Daemon is not running" {
		t.Errorf("daemon status: %q", got)
	}
	out := s.must("ls", "--json")
	lines := strings.SplitN(out, "\n", 4)
	if len(lines) < 4 || lines[0] != "Starting sandboxd daemon..." || !strings.HasPrefix(lines[1], "Daemon started (PID ") ||
		!strings.HasPrefix(lines[2], "Logs: ") || !strings.HasPrefix(lines[3], "{") {
		t.Errorf("first command after daemon stop: %q", out)
	}
	if out := s.must("ls", "--json"); !strings.HasPrefix(out, "{") {
		t.Errorf("second command: %q", out)
	}
	if !strings.Contains(s.must("ls"), "stopped") {
		t.Error("the daemon's stop did not stop the sandbox")
	}

	s.must("logout")
	for _, args := range [][]string{{"ls"}, {"exec", name, "true"}, {"create", "shell", t.TempDir()}, {"stop", name},
		{"rm", name}, {"ports", name}, {"cp", "/etc/hostname", name + ":/tmp/x"}, {"run", "--name", name, "-d"}} {
		r := s.run(args...)
		want := "You are not authenticated to Docker"
		if args[0] == "ls" {
			want = "Not authenticated to Docker"
		}
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("signed out, %v: %s", args, r)
		}
	}
	if r := s.run("version"); r.code != 0 {
		t.Errorf("version needs no sign-in: %s", r)
	}
	s.must("login")
	s.must("exec", name, "true")
}

// TestVersionsAndFlags: version in both shapes, flags of the played version only,
// an undocumented flag refused, both missing-sandbox wordings, create --pull recorded.
func TestVersionsAndFlags(t *testing.T) {
	s := newSim(t, false)
	if got := s.must("version"); !strings.HasPrefix(got, "Client Version: v0.55.0 ") || !strings.Contains(got, "\nServer Version: v0.55.0 ") {
		t.Errorf("version: %q", got)
	}
	var v struct{ Client, Server struct{ Version string } }
	if err := json.Unmarshal([]byte(s.must("version", "--json")), &v); err != nil || v.Client.Version != "v0.55.0" {
		t.Errorf("version --json: %+v %v", v, err)
	}
	old := []string{"SBXSIM_VERSION=0.41.0"}
	if r := s.runWith(old, "", "version", "--json"); r.code != 1 || !strings.Contains(r.stderr, "unknown flag: --json") {
		t.Errorf("version --json at 0.41: %s", r)
	}
	if r := s.runWith([]string{"SBXSIM_VERSION=0.45.0"}, "", "create", "--pull", "missing", "shell", t.TempDir()); r.code != 1 || !strings.Contains(r.stderr, "unknown flag: --pull") {
		t.Errorf("create --pull at 0.45: %s", r)
	}
	if r := s.run("exec", "--detach-keys", "x", "box", "true"); r.code != 1 || !strings.Contains(r.stderr, "unknown flag: --detach-keys") {
		t.Errorf("an undocumented exec flag: %s", r)
	}
	name := s.name("pull")
	s.must("create", "-q", "--pull", "missing", "--name", name, "shell", t.TempDir())
	b, err := os.ReadFile(filepath.Join(s.state, "sandboxes", name, "state.json"))
	if err != nil || !strings.Contains(string(b), `"pull": "missing"`) {
		t.Errorf("create --pull missing not recorded: %s %v", b, err)
	}
	missing := s.name("none")
	if r := s.run("exec", missing, "true"); r.code != 1 || !strings.Contains(r.stderr, "no sandbox named '"+missing+"'") {
		t.Errorf("exec of a missing sandbox: %s", r)
	}
	if r := s.run("ports", missing); r.code != 1 || !strings.Contains(r.stderr, "sandbox '"+missing+"' not found") {
		t.Errorf("ports of a missing sandbox: %s", r)
	}
	var diag struct {
		Version string
		Checks  []struct{ Name, Status string }
	}
	if err := json.Unmarshal([]byte(s.must("diagnose", "--json")), &diag); err != nil || diag.Version != "1.0" || len(diag.Checks) < 5 {
		t.Errorf("diagnose --json: %+v %v", diag, err)
	}
}

// TestNoIdmapFallsBackToTheOwner: on a file system that cannot be idmapped (ramfs),
// create says so and "agent" runs with the workspace owner's ids, so that it can still
// write the workspace.
func TestNoIdmapFallsBackToTheOwner(t *testing.T) {
	s := newSim(t, false)
	ws := t.TempDir()
	if err := syscall.Mount("none", ws, "ramfs", 0, "mode=0700"); err != nil {
		t.Fatalf("mounting a ramfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(ws, syscall.MNT_DETACH) })
	name := s.name("ramfs")
	r := s.run("create", "-q", "--name", name, "shell", ws)
	if r.code != 0 || !strings.Contains(r.stderr, "idmapped mounts are not supported") {
		t.Fatalf("create on a ramfs: %s", r)
	}
	if got := s.must("exec", name, "sh", "-c", "id -u; touch f && echo wrote"); got != "0\nwrote\n" {
		t.Errorf("inside: %q, want the owner's uid (root) and a write", got)
	}
}
