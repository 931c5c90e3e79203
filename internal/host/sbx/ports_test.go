package sbx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParsePorts(t *testing.T) {
	want := []Published{{HostIP: "127.0.0.1", HostPort: 45925, SandboxPort: 8080, Protocol: "tcp4"}}
	for _, in := range []string{
		`[{"host_ip":"127.0.0.1","host_port":45925,"sandbox_port":8080,"protocol":"tcp4"}]`,
		`{"ports":[{"host_ip":"127.0.0.1","host_port":45925,"sandbox_port":8080,"protocol":"tcp4"}]}`,
		"HOST IP    HOST PORT  SANDBOX PORT  PROTOCOL\n127.0.0.1  45925      8080          tcp4\n",
		`[{"hostIP":"127.0.0.1","hostPort":45925,"sandboxPort":8080,"protocol":"tcp4"}]`,
	} {
		got, err := parsePorts([]byte(in))
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{
		`[{"host_ip":"nope","host_port":1,"sandbox_port":1,"protocol":"tcp"}]`,
		`[{"host_ip":"127.0.0.1","host_port":70000,"sandbox_port":1,"protocol":"tcp"}]`,
		`[{"host_ip":"127.0.0.1","host_port":1,"sandbox_port":1,"protocol":"sctp"}]`,
		"127.0.0.1 x 80 tcp",
	} {
		_, err := parsePorts([]byte(bad))
		assert.Error(t, err, bad)
	}
	for _, none := range []string{"[]", "No published ports\n", ""} {
		got, err := parsePorts([]byte(none))
		require.NoError(t, err, none)
		assert.Empty(t, got, none)
	}
}

func TestPortSpecs(t *testing.T) {
	for _, ok := range []string{"8080", "80:8080", "127.0.0.1:80:8080/tcp", "[::1]:80:8080/tcp6", "53/udp"} {
		assert.NoError(t, ValidPortSpec(ok), ok)
	}
	for _, bad := range []string{"", "-p", "80:80:80:80", "80/sctp", "8080\n", "--publish=1"} {
		assert.Error(t, ValidPortSpec(bad), bad)
	}
	p := Published{HostIP: "::1", HostPort: 1, SandboxPort: 2, Protocol: "tcp6"}
	assert.Equal(t, "[::1]:1:2/tcp6", p.Spec())
	assert.True(t, p.Loopback())
	assert.False(t, Published{HostIP: "0.0.0.0"}.Loopback())
}

// TestParseCloudPorts: a cloud sandbox's ports carry their public URL.
func TestParseCloudPorts(t *testing.T) {
	got, err := parsePorts([]byte(`[{"host_ip":"127.0.0.1","host_port":44457,"sandbox_port":8080,"protocol":"tcp4","url":"https://127.0.0.1:44457"}]`))
	require.NoError(t, err)
	assert.Equal(t, []Published{{HostIP: "127.0.0.1", HostPort: 44457, SandboxPort: 8080, Protocol: "tcp4", URL: "https://127.0.0.1:44457"}}, got)
}
