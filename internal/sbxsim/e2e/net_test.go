//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

type portJSON struct {
	HostIP      string `json:"host_ip"`
	HostPort    int    `json:"host_port"`
	SandboxPort int    `json:"sandbox_port"`
	Protocol    string `json:"protocol"`
}

// publish publishes spec and returns the resulting mappings (ports --json).
func (s *sim) ports(name string, args ...string) []portJSON {
	s.t.Helper()
	out := s.must(append([]string{"ports", name, "--json"}, args...)...)
	var ps []portJSON
	if err := json.Unmarshal([]byte(out), &ps); err != nil {
		s.t.Fatalf("ports --json: %v: %q", err, out)
	}
	return ps
}

// httpGet fetches url; the error is the result.
func httpGet(url string) (string, error) { return httpGetWithin(url, 20*time.Second) }

// httpGetWithin fetches url with a client timeout.
func httpGetWithin(url string, timeout time.Duration) (string, error) {
	c := http.Client{Timeout: timeout}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// hostAddrs are the host's non-loopback IPv4 addresses (outside sbxsim's veths).
func hostAddrs(t *testing.T) []string {
	t.Helper()
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback != 0 || strings.HasPrefix(i.Name, "sbxsim") {
			continue
		}
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			if ip, _, err := net.ParseCIDR(a.String()); err == nil && ip.To4() != nil {
				out = append(out, ip.String())
			}
		}
	}
	return out
}

// assertUnreachable checks that nothing answers at url from the host.
func assertUnreachable(t *testing.T, url, why string) {
	t.Helper()
	// A connection the sandbox drops hangs: give up after a while. A slow answer would
	// still be an answer, so a loaded machine can only hide a failure, not invent one.
	if body, err := httpGetWithin(url, 2*time.Second); err == nil {
		t.Errorf("%s answered %q from the host; want unreachable (%s)", url, body, why)
	}
}

// TestPortsPublishAServiceInTheSandbox runs a web server in the sandbox itself (no
// docker) and shows it is reachable from the host only through a published port, only
// on 127.0.0.1, and only while published.
func TestPortsPublishAServiceInTheSandbox(t *testing.T) {
	s := newSim(t, false)
	name := s.create("ports", t.TempDir())
	ip := s.stateOf(name).Net.SandboxIP
	s.must("exec", name, "sh", "-c", "mkdir -p /tmp/www && echo served-inside > /tmp/www/index.html && busybox httpd -p 8080 -h /tmp/www")
	if got := s.must("exec", name, "busybox", "wget", "-qO-", "http://127.0.0.1:8080/"); got != "served-inside\n" {
		t.Fatalf("server inside the sandbox does not answer: %q", got)
	}
	assertUnreachable(t, "http://"+ip+":8080/", "the veth lets no connection in")
	assertUnreachable(t, "http://127.0.0.1:8080/", "not published")

	ps := s.ports(name, "--publish", "8080")
	if len(ps) != 1 || ps[0].HostIP != "127.0.0.1" || ps[0].SandboxPort != 8080 || ps[0].Protocol != "tcp4" || ps[0].HostPort == 0 {
		t.Fatalf("ports after --publish 8080: %+v", ps)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/", ps[0].HostPort)
	if body, err := httpGet(url); err != nil || body != "served-inside\n" {
		t.Errorf("published port: %q, %v", body, err)
	}
	for _, a := range hostAddrs(t) {
		assertUnreachable(t, fmt.Sprintf("http://%s:%d/", a, ps[0].HostPort), "published on 127.0.0.1 only")
	}
	if ls := s.runWith([]string{v055}, "", "ls").stdout; !strings.Contains(ls, fmt.Sprintf("127.0.0.1:%d->8080/tcp4", ps[0].HostPort)) {
		t.Errorf("ls does not show the port:\n%s", ls)
	}

	if ps := s.ports(name, "--unpublish", "8080"); len(ps) != 0 {
		t.Errorf("ports after --unpublish: %+v", ps)
	}
	assertUnreachable(t, url, "unpublished")
	if out := psLines(t, "__proxy"); strings.Contains(out, ip+":8080") {
		t.Errorf("proxy still running after unpublish:\n%s", out)
	}
}

// TestPortsSurviveRestartAndRemove: a fixed host port is published again after a stop
// and start; rm ends the proxy.
func TestPortsSurviveRestartAndRemove(t *testing.T) {
	s := newSim(t, false)
	name := s.create("restart", t.TempDir())
	ps := s.ports(name, "--publish", "127.0.0.1:0:9000")
	if len(ps) != 1 {
		t.Fatalf("ports: %+v", ps)
	}
	before := s.stateOf(name)
	s.must("stop", name)
	if out := psLines(t, "__proxy"); strings.Contains(out, before.Net.SandboxIP) {
		t.Errorf("proxy survived stop:\n%s", out)
	}
	s.must("run", "--name", name, "-d")
	st := s.stateOf(name)
	if ps := s.ports(name); len(ps) != 1 || ps[0].SandboxPort != 9000 {
		t.Errorf("ports after restart: %+v", ps)
	}
	if out := psLines(t, "__proxy "+st.Net.SandboxIP+":9000"); out == "" {
		t.Error("no proxy after restart")
	}
	s.must("rm", "--force", name)
	if out := psLines(t, "__proxy "+st.Net.SandboxIP+":9000"); out != "" {
		t.Errorf("proxy survived rm:\n%s", out)
	}
	assertGone(t, st)
}
