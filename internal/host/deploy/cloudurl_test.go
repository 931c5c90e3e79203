package deploy

import (
	"testing"

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
