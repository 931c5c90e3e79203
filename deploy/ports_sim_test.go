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
