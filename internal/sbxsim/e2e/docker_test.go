//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDockerInsideEachSandbox: each sandbox has its own daemon on /var/run/docker.sock,
// with the locally built busybox image, and its own cgroup subtree; a container's
// published port is reachable from the host only through `ports`.
func TestDockerInsideEachSandbox(t *testing.T) {
	s := newSim(t, true)
	_, hostSockErr := os.Stat("/var/run/docker.sock")
	a := s.create("dk-a", t.TempDir())
	b := s.create("dk-b", t.TempDir())
	ids := map[string]string{}
	for _, n := range []string{a, b} {
		r := s.run("exec", n, "docker", "-H", "unix:///var/run/docker.sock", "info", "--format", "{{.ID}}")
		if r.code != 0 || strings.TrimSpace(r.stdout) == "" {
			t.Fatalf("docker info in %s: %s", n, r)
		}
		ids[n] = strings.TrimSpace(r.stdout)
	}
	if ids[a] == ids[b] {
		t.Errorf("both sandboxes report daemon ID %s; want one daemon each", ids[a])
	}
	// The daemons' sockets are inside only: none appeared on the host.
	if _, err := os.Stat("/var/run/docker.sock"); os.IsNotExist(hostSockErr) && err == nil {
		t.Error("a sandbox's dockerd socket appeared on the host at /var/run/docker.sock")
	}

	run := "docker run -d --name web -p 8080:80 busybox sh -c 'mkdir -p /www && echo from-container > /www/index.html && exec httpd -f -p 80 -h /www'"
	s.must("exec", a, "sh", "-c", run)
	if got := s.must("exec", a, "sh", "-c", "for i in $(seq 50); do busybox wget -qO- http://127.0.0.1:8080/ 2>/dev/null && exit 0; sleep 0.2; done; exit 1"); got != "from-container\n" {
		t.Fatalf("container not answering inside the sandbox: %q", got)
	}
	// The other sandbox's daemon knows nothing of it.
	if got := s.must("exec", b, "docker", "ps", "-q"); got != "" {
		t.Errorf("container visible from the other sandbox's daemon: %q", got)
	}
	// Cgroups: each sandbox sees its own subtree of the host's cgroup2 hierarchy only —
	// not a cgroup planted on the host, not the other sandbox's containers.
	cg := cgroup2Root(t)
	marker := filepath.Join(cg, "sbxsim-e2e-marker-"+a)
	if err := os.Mkdir(marker, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(marker) })
	id := strings.TrimSpace(s.must("exec", a, "docker", "inspect", "-f", "{{.Id}}", "web"))
	if got := s.must("exec", a, "sh", "-c", "ls /sys/fs/cgroup/docker"); !strings.Contains(got, id) {
		t.Errorf("the container's cgroup is not in its sandbox's /sys/fs/cgroup/docker: %q", got)
	}
	for _, probe := range []struct{ sandbox, path string }{
		{a, "/sys/fs/cgroup/" + filepath.Base(marker)},
		{b, "/sys/fs/cgroup/docker/" + id},
		{b, "/sys/fs/cgroup/sbxsim"},
	} {
		if r := s.run("exec", probe.sandbox, "test", "-e", probe.path); r.code != 1 {
			t.Errorf("%s is visible in %s: %s", probe.path, probe.sandbox, r)
		}
	}

	ip := s.stateOf(a).Net.SandboxIP
	assertUnreachable(t, "http://"+ip+":8080/", "the veth lets no connection in")
	assertUnreachable(t, "http://127.0.0.1:8080/", "not published")

	ps := s.ports(a, "--publish", "8080")
	if len(ps) != 1 {
		t.Fatalf("ports: %+v", ps)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/", ps[0].HostPort)
	if body, err := httpGet(url); err != nil || body != "from-container\n" {
		t.Errorf("published container port: %q, %v", body, err)
	}
	for _, h := range hostAddrs(t) {
		assertUnreachable(t, fmt.Sprintf("http://%s:%d/", h, ps[0].HostPort), "published on 127.0.0.1 only")
	}

	// Stop and start keep the daemon's data (the container, the image).
	s.must("stop", a)
	if got := s.must("exec", a, "docker", "ps", "-a", "--format", "{{.Names}}"); got != "web\n" {
		t.Errorf("containers after restart: %q", got)
	}
	st := s.stateOf(a)
	s.must("rm", "--force", a)
	assertGone(t, st) // with dockerd, containerd, the shim and httpd
	if _, err := os.Stat(filepath.Join(s.state, "sandboxes", a)); !os.IsNotExist(err) {
		t.Errorf("docker data root of %s left after rm: %v", a, err)
	}
	if left, _ := filepath.Glob(filepath.Join(cg, "sbxsim", a+".*")); len(left) > 0 {
		t.Errorf("cgroup of %s left after rm: %v", a, left)
	}
}

// cgroup2Root is the host's cgroup2 mount point, from /proc/self/mountinfo.
func cgroup2Root(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if f := strings.Fields(pre); ok && strings.HasPrefix(post, "cgroup2 ") && len(f) >= 5 {
			return f[4]
		}
	}
	t.Fatal("the host has no cgroup2 hierarchy")
	return ""
}
