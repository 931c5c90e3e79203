//go:build e2e

package deploy

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPublishFallbackAndUDP: a host port that is taken falls back to a free one (and the
// reply says so); a /udp port reaches sbx as udp (sbxsim forwards TCP only, so there the
// reply reports that port's failure, with the container running); rm unpublishes.
func TestPublishFallbackAndUDP(t *testing.T) {
	w := newSimWorld(t)
	w.create("deploy-ports")
	d := w.deployer("deploy-ports", w.environ())
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	h := taken.Addr().(*net.TCPAddr).Port

	out, isErr := callText(t, d, "docker_run", map[string]any{"image": "busybox:latest", "name": "p1",
		"ports": []string{fmt.Sprintf("%d:8080", h), "5353/udp"}, "command": "sleep 300"})
	assert.True(t, isErr, "the udp port could not be published: %s", out)
	assert.Contains(t, out, "Started container")
	assert.Contains(t, out, fmt.Sprintf("host port %d was not available", h))
	m := regexp.MustCompile(`8080/tcp -> http://127\.0\.0\.1:([0-9]+)/`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	got, _ := strconv.Atoi(m[1])
	assert.NotEqual(t, h, got, "an ephemeral port instead")
	assert.Regexp(t, `port 5353/udp: publishing sandbox port [0-9]+: .*"[0-9]+/udp": sbxsim forwards TCP only`, out)

	list, err := d.Sbx.ListPorts(context.Background(), "deploy-ports")
	require.NoError(t, err)
	var protos []string
	for _, p := range list {
		protos = append(protos, p.Protocol)
	}
	assert.Equal(t, []string{"tcp4"}, protos)

	out, isErr = callText(t, d, "docker_rm", map[string]any{"id": "p1"})
	require.False(t, isErr, out)
	list, err = d.Sbx.ListPorts(context.Background(), "deploy-ports")
	require.NoError(t, err)
	assert.Empty(t, list, "rm unpublished it")
}

// TestPortsBelongToTheirContainer: a stopped container's port is given to another
// container; removing the stopped one leaves the other's host port published (before,
// rm unpublished every mapping to the sandbox port the stopped one had once bound).
func TestPortsBelongToTheirContainer(t *testing.T) {
	w := newSimWorld(t)
	const sandbox = "deploy-owners"
	w.create(sandbox)
	d := w.deployer(sandbox, w.environ())
	h := freePort(t)
	spec := fmt.Sprintf("%d:8080", h)
	run := func(name string) {
		out, isErr := callText(t, d, "docker_run", map[string]any{"image": "busybox:latest", "name": name, "ports": []string{spec}, "command": "httpd -f -p 8080"})
		require.False(t, isErr, out)
		require.Contains(t, out, fmt.Sprintf("http://127.0.0.1:%d/", h))
	}
	hostPorts := func() []int {
		list, err := d.Sbx.ListPorts(context.Background(), sandbox)
		require.NoError(t, err)
		var ports []int
		for _, m := range list {
			ports = append(ports, m.HostPort)
		}
		return ports
	}
	run("web-a")
	out, isErr := callText(t, d, "docker_stop", map[string]any{"id": "web-a"})
	require.False(t, isErr, out)
	assert.NotContains(t, hostPorts(), h)
	run("web-b")
	out, isErr = callText(t, d, "docker_rm", map[string]any{"id": "web-a"})
	require.False(t, isErr, out)
	assert.NotContains(t, out, "Unpublished", "a owned no port any more")
	assert.Contains(t, hostPorts(), h, "b's host port stays published")
	out, isErr = callText(t, d, "docker_rm", map[string]any{"id": "web-b"})
	require.False(t, isErr, out)
	assert.NotContains(t, hostPorts(), h)
}
