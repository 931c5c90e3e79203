//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCp copies both ways with docker cp's naming rules, and installs and runs a program
// in /tmp the way the backend installs its agent.
func TestCp(t *testing.T) {
	s := newSim(t, false)
	ws := t.TempDir()
	name := s.create("cp", ws)
	host := t.TempDir()
	if err := os.WriteFile(filepath.Join(host, "in.txt"), []byte("to the sandbox\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(host, "tree", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(host, "tree", "sub", "leaf"), []byte("leaf\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// Host to sandbox: into the private /tmp (invisible from the host), as a new name
	// and into an existing directory.
	s.must("cp", filepath.Join(host, "in.txt"), name+":/tmp/renamed.txt")
	s.must("exec", name, "mkdir", "/tmp/dir")
	s.must("cp", filepath.Join(host, "tree"), name+":/tmp/dir")
	if got := s.must("exec", name, "cat", "/tmp/renamed.txt", "/tmp/dir/tree/sub/leaf"); got != "to the sandbox\nleaf\n" {
		t.Errorf("copied into the sandbox: %q", got)
	}
	if _, err := os.Stat("/tmp/renamed.txt"); err == nil {
		t.Error("the sandbox's /tmp is the host's")
	}

	// Sandbox to host.
	s.must("exec", name, "sh", "-c", "echo from the sandbox > /tmp/out.txt")
	s.must("cp", name+":/tmp/out.txt", filepath.Join(host, "out.txt"))
	s.must("cp", name+":/tmp/dir", host)
	for p, want := range map[string]string{"out.txt": "from the sandbox\n", "dir/tree/sub/leaf": "leaf\n"} {
		if b, err := os.ReadFile(filepath.Join(host, p)); err != nil || string(b) != want {
			t.Errorf("%s on the host: %q, %v", p, b, err)
		}
	}

	// The backend's agent install: a program streamed into /tmp by `exec -i … cat > tmp
	// && mv`, or copied there, runs from /tmp (writable, not noexec).
	payload, err := os.ReadFile(bin) // a static program: sbxsim itself
	if err != nil {
		t.Fatal(err)
	}
	install := "umask 077 && cat > /tmp/pi-sbx-agent-x.tmp && chmod 700 /tmp/pi-sbx-agent-x.tmp && mv /tmp/pi-sbx-agent-x.tmp /tmp/pi-sbx-agent-x"
	if r := s.runWith(nil, string(payload), "exec", "-i", name, "sh", "-c", install); r.code != 0 {
		t.Fatalf("streaming a program into /tmp: %s", r)
	}
	s.must("cp", bin, name+":/tmp/pi-sbx-agent-y")
	for _, p := range []string{"/tmp/pi-sbx-agent-x", "/tmp/pi-sbx-agent-y"} {
		if got := s.must("exec", name, p, "version"); !strings.HasPrefix(got, "Client Version: v") {
			t.Errorf("%s version inside: %q", p, got)
		}
	}

	for _, args := range [][]string{
		{"cp", name + ":relative", host},
		{"cp", name + ":/tmp/out.txt", name + ":/tmp/x"},
		{"cp", filepath.Join(host, "in.txt"), filepath.Join(host, "x")},
		{"cp", name + ":/no/such/file", host},
	} {
		if r := s.run(args...); r.code != 1 || !strings.HasPrefix(r.stderr, "ERROR: ") {
			t.Errorf("%v: %s; want exit 1 with an ERROR", args, r)
		}
	}
}

func TestExecUserAndWorkdir(t *testing.T) {
	s := newSim(t, false)
	ws := t.TempDir()
	if err := os.Mkdir(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	name := s.create("user", ws)
	// A directory that exists only inside: -w is resolved in the sandbox's mount namespace.
	s.must("exec", name, "mkdir", "/tmp/only-inside")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"exec", "-u", "nobody", name, "id", "-u"}, "65534\n"},
		{[]string{"exec", "--user=1234:5678", name, "sh", "-c", "id -u; id -g"}, "1234\n5678\n"},
		{[]string{"exec", "-u", "root", name, "id", "-un"}, "root\n"},
		{[]string{"exec", "-w", filepath.Join(ws, "sub"), name, "pwd"}, filepath.Join(ws, "sub") + "\n"},
		{[]string{"exec", "-w", "/tmp/only-inside", name, "pwd"}, "/tmp/only-inside\n"},
	}
	for _, tt := range tests {
		if got := s.must(tt.args...); got != tt.want {
			t.Errorf("%v = %q, want %q", tt.args, got, tt.want)
		}
	}
	if r := s.run("exec", "-u", "no-such-user-xyz", name, "true"); r.code != 1 || !strings.Contains(r.stderr, "unable to find user") {
		t.Errorf("unknown user: %s", r)
	}
}

func TestLsAndRun(t *testing.T) {
	s := newSim(t, false)
	ws, extra := t.TempDir(), t.TempDir()
	a := s.create("ls-a", ws, extra+":ro")
	b := s.name("ls-b")
	// run -d creates when the sandbox does not exist yet (with the workspace given).
	if got := s.must("run", "-d", "--name", b, "shell", ws); got != b+"\n" {
		t.Errorf("run -d printed %q", got)
	}
	s.must("stop", b)

	var out struct {
		Sandboxes []struct {
			Name       string   `json:"name"`
			Status     string   `json:"status"`
			Agent      string   `json:"agent"`
			Workspaces []string `json:"workspaces"`
			Ports      []any    `json:"ports"`
		} `json:"sandboxes"`
	}
	if err := json.Unmarshal([]byte(s.must("ls", "--json")), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Sandboxes) != 2 {
		t.Fatalf("ls --json: %+v", out)
	}
	got := out.Sandboxes[0]
	if got.Name != a || got.Status != "running" || got.Agent != "shell" || strings.Join(got.Workspaces, " ") != ws+" "+extra+":ro" || got.Ports == nil {
		t.Errorf("ls --json entry: %+v", got)
	}
	if out.Sandboxes[1].Name != b || out.Sandboxes[1].Status != "stopped" {
		t.Errorf("ls --json entry: %+v", out.Sandboxes[1])
	}
	if q := s.must("ls", "-q"); q != a+"\n"+b+"\n" {
		t.Errorf("ls -q = %q", q)
	}
	table := s.must("ls")
	if !strings.HasPrefix(table, "SANDBOX") || !strings.Contains(table, "stopped") || !strings.Contains(table, extra+":ro") {
		t.Errorf("ls table:\n%s", table)
	}

	// run --name N -d starts an existing sandbox; creation-only flags are refused.
	if got := s.must("run", "--name", b, "-d"); got != b+"\n" {
		t.Errorf("run --name -d printed %q", got)
	}
	if !strings.Contains(s.must("ls"), "running") {
		t.Error("run -d did not start the sandbox")
	}
	if r := s.run("run", "--name", b, "-d", "--memory", "1g"); r.code != 1 || !strings.Contains(r.stderr, "only be used when creating") {
		t.Errorf("run with --memory on an existing sandbox: %s", r)
	}
	if r := s.run("stop", s.name("none")); r.code != 1 || !strings.Contains(r.stderr, "sandbox '"+s.name("none")+"' not found") {
		t.Errorf("stop of a missing sandbox: %s", r)
	}
}

// TestExtraHiddenDirs: SBXSIM_HIDE hides more of the host, and a workspace inside a
// hidden directory is still mounted at its path.
func TestExtraHiddenDirs(t *testing.T) {
	s := newSim(t, false)
	parent := t.TempDir()
	ws := filepath.Join(parent, "ws")
	secret := filepath.Join(parent, "secret")
	for _, d := range []string{ws, secret} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(secret, "key"), []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	name := s.name("hide")
	if r := s.runWith([]string{"SBXSIM_HIDE=" + parent}, "", "create", "--name", name, "shell", ws); r.code != 0 {
		t.Fatalf("create: %s", r)
	}
	if got := s.must("exec", name, "ls", "-A", parent); got != "ws\n" {
		t.Errorf("hidden %s shows %q inside; want only the workspace", parent, got)
	}
	s.must("exec", name, "touch", "written")
	if _, err := os.Stat(filepath.Join(ws, "written")); err != nil {
		t.Errorf("workspace inside a hidden directory is not shared: %v", err)
	}
	if r := s.runWith([]string{"SBXSIM_HIDE=relative"}, "", "create", "shell", ws); r.code != 1 || !strings.Contains(r.stderr, "not an absolute path") {
		t.Errorf("relative SBXSIM_HIDE: %s", r)
	}
}
