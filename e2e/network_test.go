//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// These tests run serve against sbxsim's egress proxy and network policy as sbx 0.55 has
// them (docs/sbxsim.md): a fresh install with no preset, a deny-all policy with allowed
// and denied test hosts, and an sbx that hangs or is merely slow.

// netEnv lets the simulator's network and timing knobs through to sbx (the backend
// scrubs sbx's environment down to DOCKER_SANDBOX_ENV_ALLOWLIST), then extra.
func netEnv(extra ...string) []string {
	return append([]string{"DOCKER_SANDBOX_ENV_ALLOWLIST=SBXSIM_STATE,SBXSIM_DOCKER,SBXSIM_RESOLVE,SBXSIM_HANG,SBXSIM_CREATE_DELAY"}, extra...)
}

// timedEcho runs `echo in` through the bash tool and returns its text, whether it
// failed, and how long it took.
func timedEcho(t *testing.T, cs *mcp.ClientSession) (out string, failed bool, took time.Duration) {
	t.Helper()
	start := time.Now()
	res := call(t, cs, "bash", `{"command":"echo in"}`)
	return text(res), res.IsError, time.Since(start)
}

// TestFreshInstallNamesPolicyInit: on an sbx that never had a network preset chosen,
// serve's first call fails within seconds (never waits on a prompt no one sees) with
// one line naming `sbx policy init`, and no sandbox is left.
func TestFreshInstallNamesPolicyInit(t *testing.T) {
	w := newFreshWorld(t)
	cs, _, _ := w.serve(nil, nil, netEnv()...)
	out, failed, took := timedEcho(t, cs)
	t.Logf("a fresh sbx: the first call failed after %s: %s", took, out)
	require.True(t, failed, "the first call on a fresh sbx: %s", out)
	assert.Contains(t, out, "sbx policy init")
	assert.Equal(t, 1, len(strings.Split(strings.TrimSpace(out), "\n")), "one line: %q", out)
	assert.Less(t, took, 15*time.Second, "the failure took %s", took)
	assert.Empty(t, w.sandboxes())
}

// testHosts serves HTTP on the host's loopback for two names the sandbox resolves
// through SBXSIM_RESOLVE; it returns the port and the SBXSIM_RESOLVE setting.
func testHosts(t *testing.T, names ...string) (port, resolve string) {
	t.Helper()
	web := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(rw, "hello from %s", r.Host)
	}))
	t.Cleanup(web.Close)
	addr := strings.TrimPrefix(web.URL, "http://")
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	var maps []string
	for _, n := range names {
		maps = append(maps, n+"="+addr)
	}
	return port, "SBXSIM_RESOLVE=" + strings.Join(maps, ",")
}

// TestDeniedHostIsNamedAndAllowed: under deny-all with one host allowed, the bash tool
// reaches the allowed host; a denied host's result ends with the denial line naming the
// host, port and preset and the command that allows it; that command, run, lets the next
// call through with nothing appended.
func TestDeniedHostIsNamedAndAllowed(t *testing.T) {
	w := newWorld(t)
	port, resolve := testHosts(t, "ok.test", "no.test", "far.test")
	for _, argv := range [][]string{{"policy", "init", "deny-all"}, {"policy", "allow", "network", "ok.test"}} {
		out, code := w.sim(argv...)
		require.Zero(t, code, "sbx %v: %s", argv, out)
	}
	cs, _, _ := w.serve(nil, nil, netEnv(resolve)...)
	curl := func(host string) string {
		t.Helper()
		res := call(t, cs, "bash", fmt.Sprintf(`{"command":"curl -sS -m 10 http://%s:%s/"}`, host, port))
		return text(res)
	}
	denial := "[sandbox network] denied: no.test:" + port + " (preset deny-all); allow with: pi-sbx-backend allow no.test"

	assert.Equal(t, "hello from ok.test:"+port, curl("ok.test"), "the allowed host")
	denied := curl("no.test")
	assert.NotContains(t, denied, "hello from", "the denied host was reached")
	assert.True(t, strings.HasSuffix(strings.TrimSpace(denied), denial), "the denied host's result:\n%s\nwant it to end with:\n%s", denied, denial)
	assert.Equal(t, 1, strings.Count(denied, "[sandbox network]"), denied)

	// A `!` command (pi's, through serve's pty method) is explained the same way.
	bang, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tools.PtyExecName, Arguments: map[string]any{
		"command": "curl -sS -m 10 http://far.test:" + port + "/", "cols": 80, "rows": 24}})
	require.NoError(t, err)
	assert.Contains(t, text(bang), "[sandbox network] denied: far.test:"+port+" (preset deny-all); allow with: pi-sbx-backend allow far.test",
		"the ! command's result")

	allow := exec.Command(backendBin, "allow", "no.test")
	allow.Dir, allow.Env = w.ws, w.env(netEnv()...)
	out, err := allow.CombinedOutput()
	require.NoError(t, err, "pi-sbx-backend allow no.test: %s", out)
	assert.Equal(t, "hello from no.test:"+port, curl("no.test"), "the host after pi-sbx-backend allow")
}

// TestHungSbxFailsWithinSeconds: when sbx's exec hangs (a stalled token refresh hangs
// every command), the first call fails within 15 s naming sbx as what is stuck and what
// to try, instead of waiting out the call's own timeout.
func TestHungSbxFailsWithinSeconds(t *testing.T) {
	w := newWorld(t)
	cs, _, _ := w.serve(nil, nil, netEnv("SBXSIM_HANG=exec")...)
	out, failed, took := timedEcho(t, cs)
	t.Logf("a hung sbx: the first call failed after %s: %s", took, out)
	require.True(t, failed, "a call on a hung sbx: %s", out)
	assert.Contains(t, out, "sbx is not answering")
	assert.Contains(t, out, "sbx daemon restart")
	assert.LessOrEqual(t, took, 15*time.Second, "the failure took %s", took)
}

// TestSlowCreateIsNotAHang: a create that takes 40 s (a template pull) is alive — sbx
// answers the probe meanwhile — and the first call succeeds after it.
func TestSlowCreateIsNotAHang(t *testing.T) {
	const delay = 40 * time.Second
	w := newWorld(t)
	cs, _, _ := w.serve(nil, nil, netEnv(fmt.Sprintf("SBXSIM_CREATE_DELAY=%s", delay))...)
	out, failed, took := timedEcho(t, cs)
	t.Logf("a %s create: the first call answered after %s", delay, took)
	require.False(t, failed, "the first call after a slow create: %s", out)
	assert.Equal(t, "in\n", out)
	assert.GreaterOrEqual(t, took, delay, "create was not delayed: the test proves nothing")
}
