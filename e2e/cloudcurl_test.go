//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var publicURLRE = regexp.MustCompile(`https://127\.0\.0\.1:([0-9]+) \(PUBLIC`)

// TestCloudCurlReachesThePublicURL: in a cloud session (sbxsim --cloud with its dockerd)
// a container's published port is a public https URL; docker_ps shows it marked
// PUBLIC, docker_curl gets the page over TLS verified with the system's roots (here
// the sim's test CA, by SSL_CERT_FILE) and says the URL is public, and refuses by name
// a URL of another port or host, and the port's loopback http address.
func TestCloudCurlReachesThePublicURL(t *testing.T) {
	w, state := reviewWorld(t, false)
	ca := filepath.Join(t.TempDir(), "cloud-ca.pem")
	env := cloudEnv(state, "SBXSIM_DOCKER=1", "SBXSIM_CLOUD_CA="+ca, "SSL_CERT_FILE="+ca)
	for i, kv := range env {
		if strings.HasPrefix(kv, "DOCKER_SANDBOX_ENV_ALLOWLIST=") {
			env[i] = kv + ",SBXSIM_CLOUD_CA" // serve scrubs sbx's environment
		}
	}
	cs, _, stderr := w.serve(nil, nil, env...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve stderr:\n%s", stderr.String())
		}
	})

	out := tool(t, cs, "docker_run", map[string]any{"image": "busybox:latest", "name": "web", "ports": []string{"8080"},
		"command": []string{"sh", "-c", "echo served-in-the-cloud > /tmp/index.html && exec httpd -f -p 8080 -h /tmp"}}, false)
	m := publicURLRE.FindStringSubmatch(out)
	require.NotNil(t, m, "docker_run names the public URL:\n%s", out)
	public := "https://127.0.0.1:" + m[1]
	_, err := os.Stat(ca)
	require.NoError(t, err, "the sim made its test CA at SBXSIM_CLOUD_CA")

	ps := tool(t, cs, "docker_ps", map[string]any{}, false)
	assert.Contains(t, ps, public+" (PUBLIC: anyone with this URL reaches the port")

	got := curlWhenUp(t, cs, public+"/index.html")
	assert.Contains(t, got, "HTTP 200")
	assert.Contains(t, got, "served-in-the-cloud")
	assert.Contains(t, got, "PUBLIC URL: "+public+" is reachable by anyone who has it")

	for _, refused := range []string{
		"https://127.0.0.1:1/",            // another port
		"https://localhost:" + m[1] + "/", // another host, the same port
		"https://example.com/",            // not a general fetcher
	} {
		out := tool(t, cs, "docker_curl", map[string]any{"url": refused}, true)
		assert.Contains(t, out, "is not a public URL of a port this sandbox published (published: "+public+")", refused)
	}
	out = tool(t, cs, "docker_curl", map[string]any{"url": "http://127.0.0.1:" + m[1] + "/"}, true)
	assert.Contains(t, out, "is not a port this sandbox published", "the public port is not reached as a loopback one")
}

// curlWhenUp calls docker_curl until the freshly started httpd answers (as eventually
// does for a host client) and returns the reply.
func curlWhenUp(t *testing.T, cs *mcp.ClientSession, u string) string {
	t.Helper()
	args := `{"url":"` + u + `","timeoutSec":5}`
	var res *mcp.CallToolResult
	for i := 0; i < 50; i++ {
		if res = call(t, cs, "docker_curl", args); !res.IsError {
			return text(res)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("docker_curl %s never answered: %s", u, text(res))
	return ""
}

// TestCloudComposePublishesThePublicURL: in a cloud session docker_compose up names a
// service's published port by its public https URL, marked PUBLIC, as docker_ps and
// docker_status do; docker_curl reaches the service there, over TLS; down unpublishes
// it.
func TestCloudComposePublishesThePublicURL(t *testing.T) {
	w, state := reviewWorld(t, false)
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, "stack"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "stack", "compose.yaml"), []byte(`services:
  web:
    image: busybox:latest
    command: ["sh", "-c", "echo composed-in-the-cloud > /tmp/index.html && exec httpd -f -p 8080 -h /tmp"]
    ports:
      - "8080"
  worker:
    image: busybox:latest
    command: ["sleep", "3600"]
`), 0o644))
	ca := filepath.Join(t.TempDir(), "cloud-ca.pem")
	env := cloudEnv(state, "SBXSIM_DOCKER=1", "SBXSIM_COMPOSE_PLUGIN="+composePlugin(t), "SBXSIM_CLOUD_CA="+ca, "SSL_CERT_FILE="+ca)
	for i, kv := range env {
		if strings.HasPrefix(kv, "DOCKER_SANDBOX_ENV_ALLOWLIST=") {
			env[i] = kv + ",SBXSIM_CLOUD_CA,SBXSIM_COMPOSE_PLUGIN" // serve scrubs sbx's environment
		}
	}
	cs, _, stderr := w.serve(nil, nil, env...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve stderr:\n%s", stderr.String())
		}
	})

	out := tool(t, cs, "docker_compose", map[string]any{"file": "stack/compose.yaml"}, false)
	m := publicURLRE.FindStringSubmatch(out)
	require.NotNil(t, m, "docker_compose names the public URL:\n%s", out)
	public := "https://127.0.0.1:" + m[1]
	assert.Contains(t, out, "web 8080/tcp -> "+public+" (PUBLIC: anyone with this URL reaches the port; the Docker login does not protect it)")
	assert.NotContains(t, out, "http://127.0.0.1", "no loopback address is offered for a cloud port")

	got := curlWhenUp(t, cs, public+"/index.html")
	assert.Contains(t, got, "composed-in-the-cloud")
	assert.Contains(t, got, "PUBLIC URL: "+public+" is reachable by anyone who has it")
	assert.Contains(t, tool(t, cs, "docker_ps", map[string]any{}, false), public+" (PUBLIC: anyone with this URL reaches the port")
	assert.Contains(t, tool(t, cs, "docker_status", map[string]any{}, false), "Published: "+public+" (PUBLIC: anyone with this URL reaches the port")

	out = tool(t, cs, "docker_compose", map[string]any{"file": "stack/compose.yaml", "action": "down"}, false)
	assert.Contains(t, out, "Unpublished host ports")
	assert.NotContains(t, tool(t, cs, "docker_status", map[string]any{}, false), public, "down unpublishes the public URL")
}

// TestCloudCurlRefusesAnUntrustedCertificate: docker_curl to a cloud sandbox's public
// URL whose certificate this host does not trust (the sim's test CA, not given by
// SSL_CERT_FILE) fails, naming the certificate's problem; the check is never skipped,
// so no reply comes back.
func TestCloudCurlRefusesAnUntrustedCertificate(t *testing.T) {
	w, state := reviewWorld(t, false)
	ca := filepath.Join(t.TempDir(), "cloud-ca.pem")
	env := cloudEnv(state, "SBXSIM_DOCKER=1", "SBXSIM_CLOUD_CA="+ca)
	for i, kv := range env {
		if strings.HasPrefix(kv, "DOCKER_SANDBOX_ENV_ALLOWLIST=") {
			env[i] = kv + ",SBXSIM_CLOUD_CA" // serve scrubs sbx's environment
		}
	}
	cs, _, stderr := w.serve(nil, nil, env...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve stderr:\n%s", stderr.String())
		}
	})
	out := tool(t, cs, "docker_run", map[string]any{"image": "busybox:latest", "name": "web", "ports": []string{"8080"},
		"command": []string{"sh", "-c", "echo not-for-an-untrusted-peer > /tmp/index.html && exec httpd -f -p 8080 -h /tmp"}}, false)
	m := publicURLRE.FindStringSubmatch(out)
	require.NotNil(t, m, "docker_run names the public URL:\n%s", out)
	host := "127.0.0.1:" + m[1]

	out = tool(t, cs, "docker_curl", map[string]any{"url": "https://" + host + "/index.html"}, true)
	assert.Contains(t, out, "GET https://"+host+"/index.html: the TLS certificate of "+host+" is signed by an authority this host does not trust")
	assert.Contains(t, out, "never skips the check")
	assert.Contains(t, out, "x509: certificate signed by unknown authority")
	assert.NotContains(t, out, "not-for-an-untrusted-peer")
	assert.NotContains(t, strings.TrimSpace(out), "\n", "one line")
}
