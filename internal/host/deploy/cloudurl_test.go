package deploy

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// TestCloudPortIsShownPublic: a cloud sandbox's published port is named by its https URL
// and said to be public; a URL that is not one sbx would give is not shown.
func TestCloudPortIsShownPublic(t *testing.T) {
	m := sbx.Published{HostIP: "127.0.0.1", HostPort: 44457, SandboxPort: 8080, Protocol: "tcp4"}
	assert.Equal(t, "http://127.0.0.1:44457/", url(m), "a local port")
	for _, tc := range []struct{ url, want string }{
		{"https://p-8080.box.sandboxes.example", "https://p-8080.box.sandboxes.example (PUBLIC: anyone with this URL reaches the port; the Docker login does not protect it)"},
		{"http://plain.example", "http://127.0.0.1:44457/"},
		{"https://a.example\n\x1b[2J", "http://127.0.0.1:44457/"},
		{"https://user:pw@a.example", "http://127.0.0.1:44457/"},
	} {
		m.URL = tc.url
		assert.Equal(t, tc.want, url(m), "%q", tc.url)
	}
}

// TestCurlReachesOnlyPublishedPublicURLs: docker_curl's https target must be, by scheme,
// host and port, a public URL sbx gave for one of the sandbox's ports; it dials that
// host and port and nothing else.
func TestCurlReachesOnlyPublishedPublicURLs(t *testing.T) {
	list := []sbx.Published{
		{HostIP: "127.0.0.1", HostPort: 44457, SandboxPort: 8080, Protocol: "tcp4", URL: "https://P-8080.box.sandboxes.example"},
		{HostIP: "127.0.0.1", HostPort: 44458, SandboxPort: 9090, Protocol: "tcp4", URL: "https://127.0.0.1:44458"},
		{HostIP: "127.0.0.1", HostPort: 44459, SandboxPort: 7070, Protocol: "tcp4"},
		{HostIP: "127.0.0.1", HostPort: 44460, SandboxPort: 6060, Protocol: "tcp4", URL: "https://evil.example\n"},
	}
	for _, tc := range []struct {
		url, addr string
	}{
		{"https://p-8080.box.sandboxes.example/", "p-8080.box.sandboxes.example:443"},
		{"https://p-8080.box.sandboxes.example:443/api?q=1", "p-8080.box.sandboxes.example:443"},
		{"https://127.0.0.1:44458/index.html", "127.0.0.1:44458"},
		{"https://127.0.0.1:44459/", ""},                   // published, but with no public URL
		{"https://127.0.0.1:44457/", ""},                   // another port of the same host
		{"https://p-8080.box.sandboxes.example:8443/", ""}, // another port
		{"https://p-9090.box.sandboxes.example/", ""},      // another host
		{"http://p-8080.box.sandboxes.example/", ""},       // another scheme
		{"https://evil.example/", ""},                      // a URL that is not shown is not reached
		{"https://box.sandboxes.example.attacker.example/", ""},
	} {
		u, err := neturl.Parse(tc.url)
		if !assert.NoError(t, err, tc.url) {
			continue
		}
		addr, ok := matchPublic(u, list)
		assert.Equal(t, tc.addr != "", ok, tc.url)
		assert.Equal(t, tc.addr, addr, tc.url)
	}
}

// TestCertProblemNamesIt: a refused certificate is named by what is wrong with it; any
// other failure is not taken for one.
func TestCertProblemNamesIt(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	trusted := x509.NewCertPool()
	trusted.AddCert(srv.Certificate())
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, tc := range []struct {
		name string
		url  string
		tls  *tls.Config
		want string
	}{
		{"an unknown authority", srv.URL, nil, "is signed by an authority this host does not trust"},
		{"another host's", srv.URL, &tls.Config{RootCAs: trusted, ServerName: "other.example"}, "is not valid for other.example"},
		{"expired", srv.URL, &tls.Config{RootCAs: trusted, Time: func() time.Time { return time.Now().AddDate(200, 0, 0) }}, "has expired or is not valid yet"},
		{"trusted", srv.URL, &tls.Config{RootCAs: trusted}, ""},
		{"no server", closed.URL, nil, ""},
	} {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: tc.tls}}
		resp, err := c.Get(tc.url)
		if err == nil {
			resp.Body.Close()
		}
		assert.Equal(t, tc.want, certProblem(err), "%s: %v", tc.name, err)
	}
}
