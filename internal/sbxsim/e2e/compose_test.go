//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
)

// composePlugin is the docker compose plugin scripts/setup.sh builds; the tests fail
// (not skip) without it, since CI runs setup.sh first.
func composePlugin(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SBXSIM_COMPOSE_PLUGIN"); p != "" {
		return p
	}
	p := filepath.Join(testbin.Root(), ".cache", "compose", "v2.40.3", "docker-compose")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no docker compose plugin (%v): run scripts/setup.sh, or set SBXSIM_COMPOSE_PLUGIN", err)
	}
	return p
}

// TestComposeUpAndDown runs the real docker compose v2 plugin inside a sandbox: a
// two-service project, one service built from a Dockerfile FROM the sandbox's local
// busybox image and publishing a port, the other reaching it by its service name; the
// port answers inside the sandbox and, once published with `ports`, on the host; `down`
// removes the containers and the project's network.
func TestComposeUpAndDown(t *testing.T) {
	s := newSim(t, true)
	ws := t.TempDir()
	files := map[string]string{
		"compose.yaml": `services:
  web:
    build: ./web
    ports: ["8080:80"]
  worker:
    image: busybox:latest
    command: ["sh", "-c", "while true; do wget -qO- http://web/ && sleep 1; done"]
`,
		"web/Dockerfile": `FROM busybox:latest
RUN mkdir /www && echo from-compose > /www/index.html
CMD ["httpd", "-f", "-p", "80", "-h", "/www"]
`,
	}
	for name, body := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	name := s.name("compose")
	if r := s.runWith([]string{"SBXSIM_COMPOSE_PLUGIN=" + composePlugin(t)}, "", "create", "-q", "--name", name, "shell", ws); r.code != 0 {
		t.Fatalf("create: %s", r)
	}
	// Not root's ~/.docker: the plugin is where the system's docker CLI looks for any user.
	if got := s.must("exec", "-u", "nobody", name, "docker", "compose", "version", "--short"); got != "2.40.3\n" {
		t.Errorf("docker compose version as nobody: %q", got)
	}
	if r := s.run("exec", name, "docker", "compose", "up", "-d", "--build"); r.code != 0 {
		t.Fatalf("compose up: %s", r)
	}
	wait := "for i in $(seq 100); do %s && exit 0; sleep 0.2; done; exit 1"
	if got := s.must("exec", name, "sh", "-c", fmt.Sprintf(wait, "busybox wget -qO- http://127.0.0.1:8080/ 2>/dev/null")); got != "from-compose\n" {
		t.Errorf("web service inside the sandbox: %q", got)
	}
	if r := s.run("exec", name, "sh", "-c", fmt.Sprintf(wait, "docker compose logs worker | grep -q from-compose")); r.code != 0 {
		t.Errorf("worker never reached web by its service name: %s\n%s", r, s.run("exec", name, "docker", "compose", "logs"))
	}
	ps := s.ports(name, "--publish", "8080")
	if len(ps) != 1 {
		t.Fatalf("ports: %+v", ps)
	}
	if body, err := httpGet(fmt.Sprintf("http://127.0.0.1:%d/", ps[0].HostPort)); err != nil || body != "from-compose\n" {
		t.Errorf("published compose port from the host: %q, %v", body, err)
	}

	if r := s.run("exec", name, "docker", "compose", "down"); r.code != 0 {
		t.Fatalf("compose down: %s", r)
	}
	if got := s.must("exec", name, "docker", "ps", "-aq"); got != "" {
		t.Errorf("containers left after compose down: %q", got)
	}
	if got := s.must("exec", name, "docker", "network", "ls", "--format", "{{.Name}}"); strings.Contains(got, "_default") {
		t.Errorf("project network left after compose down: %q", got)
	}
}

// TestComposePluginSetting: a missing SBXSIM_COMPOSE_PLUGIN is refused at create with
// the variable's name, and "none" gives a sandbox without the plugin.
func TestComposePluginSetting(t *testing.T) {
	s := newSim(t, false)
	missing := filepath.Join(t.TempDir(), "docker-compose")
	r := s.runWith([]string{"SBXSIM_COMPOSE_PLUGIN=" + missing}, "", "create", "--name", s.name("bad"), "shell")
	if r.code != 1 || !strings.Contains(r.stderr, "SBXSIM_COMPOSE_PLUGIN") || !strings.Contains(r.stderr, "no such file") {
		t.Errorf("create with a missing plugin: %s", r)
	}
	if r := s.run("ls", "-q"); strings.TrimSpace(r.stdout) != "" {
		t.Errorf("a refused create left a sandbox: %s", r)
	}
	name := s.name("none")
	if r := s.runWith([]string{"SBXSIM_COMPOSE_PLUGIN=none", "SBXSIM_DOCKER=1"}, "", "create", "--name", name, "shell"); r.code != 0 {
		t.Fatalf("create: %s", r)
	}
	if r := s.run("exec", name, "test", "-e", "/usr/libexec/docker/cli-plugins/docker-compose"); r.code != 1 {
		t.Errorf("SBXSIM_COMPOSE_PLUGIN=none still has a plugin: %s", r)
	}
}
