//go:build linux

package agentlink

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/agentbin"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/vm/vmagent"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

const box = "pi-sbx-1-test"

func vmArch(t *testing.T) string {
	out, err := execOutput("uname", "-m")
	require.NoError(t, err)
	arch, ok := archNames[strings.TrimSpace(out)]
	if !ok {
		t.Fatalf("unknown machine %q", out)
	}
	return arch
}

func execOutput(name string, args ...string) (string, error) {
	var b bytes.Buffer
	l := &localSbx{name: box}
	p, err := l.Start(context.Background(), "", sbx.Cmd{Args: append([]string{"exec", box, "--", name}, args...), Stdout: &b, Stderr: &b})
	if err != nil {
		return "", err
	}
	_, err = p.Wait()
	return b.String(), err
}

// fixture is a fake sandbox with an agent "binary" and an installer for it.
type fixture struct {
	sbx       *localSbx
	client    *sbx.Client
	installer *Installer
	exe       string
	vmDir     string
}

func newFixture(t *testing.T, goarch string) *fixture {
	hostDir := t.TempDir()
	exe := filepath.Join(hostDir, "pi-sbx-backend")
	// Big enough for several base64 chunks.
	require.NoError(t, os.WriteFile(exe, bytes.Repeat([]byte("agent-binary\x00\xff"), 20000), 0o755))
	l := &localSbx{name: box}
	client := &sbx.Client{Bin: "sbx", Runner: l}
	vmDir := t.TempDir()
	return &fixture{
		sbx: l, client: client, exe: exe, vmDir: vmDir,
		installer: &Installer{Sbx: client, Version: "v1.2+dev", Agents: finder(exe, goarch), Dir: vmDir, ChunkSize: 64 << 10},
	}
}

// finder finds exe as the agent of a linux host of architecture goarch.
func finder(exe, goarch string) *agentbin.Finder {
	return &agentbin.Finder{Executable: func() (string, error) { return exe, nil }, GOOS: "linux", GOARCH: goarch}
}

func TestInstall(t *testing.T) {
	arch := vmArch(t)
	tests := []struct {
		name       string
		dropStdin  bool
		preinstall bool
		wantScript string // a fragment of the delivery command; "" when nothing is delivered
		cloud      bool   // a cloud sandbox: one sbx cp, no stream
	}{
		{"copied in with cp to a cloud sandbox", false, false, `cat "$c" > "$t"`, true},
		{"streamed on stdin", false, false, `cat > "$t"`, false},
		{"base64 in argv when stdin does not arrive", true, false, `base64 -d >> "$1"`, false},
		{"already there with the right hash", false, true, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, arch)
			if tc.preinstall {
				first := &Installer{Sbx: f.client, Version: f.installer.Version, Agents: finder(f.exe, arch), Dir: f.vmDir}
				_, err := first.Install(context.Background(), box)
				require.NoError(t, err)
				f.sbx.execs = nil
			}
			f.sbx.dropStdin = tc.dropStdin
			if tc.cloud {
				f.installer.Sbx = f.client.InCloud()
			}
			path, err := f.installer.Install(context.Background(), box)
			require.NoError(t, err)
			assert.Regexp(t, `/pi-sbx-agent-v1.2_dev-[0-9a-f]{8}$`, path)
			assert.Equal(t, f.vmDir, filepath.Dir(path), "installed in the VM's temp dir, never the workspace")
			want, _ := os.ReadFile(f.exe)
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(want, got), "installed binary is byte-identical")
			fi, _ := os.Stat(path)
			assert.NotZero(t, fi.Mode()&0o100, "executable")
			ran := joined(f.sbx.ran())
			if tc.wantScript == "" {
				assert.Len(t, f.sbx.ran(), 1, "only the probe ran:\n%s", ran)
			} else {
				assert.Contains(t, ran, tc.wantScript)
			}
			if tc.cloud {
				assert.Contains(t, ran, "cp\n", "one cp")
				assert.NotContains(t, ran, `cat > "$t"`, "no stream over the WAN")
			}
			// Remembered: no more execs for the same sandbox.
			n := len(f.sbx.ran())
			_, err = f.installer.Install(context.Background(), box)
			require.NoError(t, err)
			assert.Len(t, f.sbx.ran(), n)
		})
	}
}

func TestInstallForeignArch(t *testing.T) {
	arch := vmArch(t)
	other := "arm64"
	if arch == "arm64" {
		other = "amd64"
	}
	f := newFixture(t, other) // this "host" is not the VM's architecture
	_, err := f.installer.Install(context.Background(), box)
	require.ErrorContains(t, err, "no agent binary for linux/"+arch)

	sibling := filepath.Join(filepath.Dir(f.exe), "pi-sbx-backend-linux-"+arch)
	require.NoError(t, os.WriteFile(sibling, []byte("the linux build"), 0o755))
	path, err := f.installer.Install(context.Background(), box)
	require.NoError(t, err)
	got, _ := os.ReadFile(path)
	assert.Equal(t, "the linux build", string(got))
}

func newChannel(t *testing.T, cwd string, env []string) (*Channel, *fixture) {
	f := newFixture(t, runtime.GOARCH)
	if vmArch(t) != runtime.GOARCH {
		t.Skip("host and VM architecture differ") // cannot happen with localSbx
	}
	ch := &Channel{Target: Target{
		Sbx: f.client, Installer: f.installer, Env: env, Cwd: cwd,
		Sandbox: func(context.Context) (string, error) { return box, nil },
	}}
	t.Cleanup(func() { ch.Close() })
	return ch, f
}

func decode(t *testing.T, r *mcp.CallToolResult) string {
	t.Helper()
	res, err := mcpserver.FromMCP(r)
	require.NoError(t, err)
	b, err := json.Marshal(res)
	require.NoError(t, err)
	return string(b)
}

func local(t *testing.T, cwd, name, args string) string {
	t.Helper()
	res, err := vmagent.Default().Call(context.Background(), cwd, name, []byte(args), tools.Env{})
	require.NoError(t, err)
	m, err := mcpserver.ToMCP(res)
	require.NoError(t, err)
	return decode(t, m)
}

func TestChannelConcurrentCalls(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte("alpha\nbeta\n"), 0o644))
	ch, f := newChannel(t, dir, []string{"PI_SESSION=42"})
	want := local(t, dir, "read", `{"path":"f.txt"}`)

	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := callTool(ch, mcpserver.Call{Name: "read", Args: json.RawMessage(`{"path":"f.txt"}`)})
			if err != nil {
				errs <- err
				return
			}
			if got := decode(t, res); got != want {
				errs <- assert.AnError
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Equal(t, 1, f.sbx.started, "one agent serves every call")

	res, err := callTool(ch, mcpserver.Call{Name: "bash", Args: json.RawMessage(`{"command":"echo $PI_SESSION"}`)})
	require.NoError(t, err)
	assert.Equal(t, "42\n", res.Content[0].(*mcp.TextContent).Text)
	for _, fl := range f.sbx.flags {
		for i, a := range fl {
			if a == "-e" {
				assert.Equal(t, "PI_SESSION", fl[i+1], "only the forwarded variables cross, named by -e flags")
			}
		}
	}
}

func TestChannelProgress(t *testing.T) {
	ch, _ := newChannel(t, t.TempDir(), nil)
	var mu sync.Mutex
	var got strings.Builder
	res, err := callTool(ch, mcpserver.Call{Name: "bash", Args: json.RawMessage(`{"command":"echo a; sleep 0.2; echo b"}`), Progress: func(msg string, _ float64) { mu.Lock(); got.WriteString(msg); mu.Unlock() }})
	require.NoError(t, err)
	// The SDK delivers notifications concurrently with results; the channel waits for
	// the agent's last one (mcpserver.ProgressMeta), so the stream is whole on return.
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, res.Content[0].(*mcp.TextContent).Text, got.String(), "progress carried the whole output, in order")
	assert.Equal(t, mcp.Meta{result.ExitCodeMeta: float64(0)}, res.Meta, "the agent's progress total stays in the channel; the outcome passes")
}

func TestChannelRestartsAfterCrash(t *testing.T) {
	dir := t.TempDir()
	ch, f := newChannel(t, dir, nil)
	done := make(chan error, 1)
	go func() {
		_, err := callTool(ch, mcpserver.Call{Name: "bash", Args: json.RawMessage(`{"command":"touch started; while [ ! -f stop ]; do sleep 0.05; done"}`)})
		done <- err
	}()
	require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(dir, "started")); return err == nil },
		10*time.Second, 10*time.Millisecond)
	f.sbx.crash()
	err := <-done
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stop"), nil, 0o644)) // end the orphaned command
	require.ErrorIs(t, err, ErrAgentDied)
	assert.Contains(t, err.Error(), "the next call restarts it")

	res, err := callTool(ch, mcpserver.Call{Name: "ls", Args: json.RawMessage(`{}`)})
	require.NoError(t, err)
	assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, "started")
	assert.Equal(t, 2, f.sbx.started)
}

func TestChannelMissingSandbox(t *testing.T) {
	ch, f := newChannel(t, t.TempDir(), nil)
	f.sbx.setMissing(true)
	_, err := callTool(ch, mcpserver.Call{Name: "bash", Args: json.RawMessage(`{"command":"touch /never"}`)})
	require.ErrorIs(t, err, sbx.ErrMissing)
	assert.Empty(t, f.sbx.ran(), "nothing ran anywhere")

	// A sandbox that disappears after the agent started: the call fails, and so does the restart.
	f.sbx.setMissing(false)
	_, err = callTool(ch, mcpserver.Call{Name: "ls", Args: json.RawMessage(`{}`)})
	require.NoError(t, err)
	f.sbx.setMissing(true)
	f.sbx.crash()
	_, err = callTool(ch, mcpserver.Call{Name: "ls", Args: json.RawMessage(`{}`)})
	if !assert.Error(t, err) {
		return
	}
	_, err = callTool(ch, mcpserver.Call{Name: "ls", Args: json.RawMessage(`{}`)})
	assert.ErrorIs(t, err, sbx.ErrMissing)
}

func TestPerCall(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte("x\ny\n"), 0o644))
	f := newFixture(t, runtime.GOARCH)
	p := &PerCall{Target: Target{Sbx: f.client, Installer: f.installer, Cwd: dir,
		Sandbox: func(context.Context) (string, error) { return box, nil }}}
	for _, c := range []struct{ name, args string }{
		{"read", `{"path":"f.txt"}`}, {"ls", `{}`}, {"bash", `{"command":"exit 4"}`},
	} {
		res, err := callTool(p, mcpserver.Call{Name: c.name, Args: json.RawMessage(c.args)})
		require.NoError(t, err)
		assert.Equal(t, local(t, dir, c.name, c.args), decode(t, res))
	}
	// path missing: invalid after pi's coercion too (a number would become a string).
	_, err := callTool(p, mcpserver.Call{Name: "read", Args: json.RawMessage(`{"offset":1}`)})
	assert.ErrorIs(t, err, tools.ErrUsage)
}

func TestChannelOversizedReplyBreaksOnlyThatCall(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.txt"), bytes.Repeat([]byte("0123456789\n"), 1000), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "small.txt"), []byte("ok\n"), 0o644))
	ch, f := newChannel(t, dir, nil)
	ch.MaxReply = 4096
	_, err := callTool(ch, mcpserver.Call{Name: "read", Args: json.RawMessage(`{"path":"big.txt"}`)})
	require.Error(t, err, "a reply over the cap is refused")
	res, err := callTool(ch, mcpserver.Call{Name: "read", Args: json.RawMessage(`{"path":"small.txt"}`)})
	require.NoError(t, err)
	assert.Equal(t, "ok\n", res.Content[0].(*mcp.TextContent).Text)
	assert.Equal(t, 2, f.sbx.started, "a fresh agent serves the next call")
}

// TestChannelHungSbxFailsOnceThenFast: when the agent's exec never answers (a hung sbx
// or VM), the first call fails after one handshake timeout — not one per start try —
// with an error naming what did not answer, and calls in the cooldown fail at once
// without starting another exec.
func TestChannelHungSbxFailsOnceThenFast(t *testing.T) {
	ch, f := newChannel(t, t.TempDir(), nil)
	// The agent is installed first: what hangs is its exec, and the install (which a
	// loaded machine can make slower than the timeout below) is not what is timed.
	sandbox, err := ch.Sandbox(context.Background())
	require.NoError(t, err)
	_, err = ch.Installer.Command(context.Background(), sandbox, "agent")
	require.NoError(t, err)
	f.sbx.hang = true
	ch.HandshakeTimeout = 300 * time.Millisecond
	ch.HungCooldown = time.Minute
	call := func() error {
		_, err := callTool(ch, mcpserver.Call{Name: "ls", Args: json.RawMessage(`{}`)})
		return err
	}
	err = call()
	require.Error(t, err)
	assert.ErrorIs(t, err, errNoAnswer)
	assert.Contains(t, err.Error(), "did not answer within 300ms")
	assert.NotContains(t, err.Error(), "context deadline exceeded;")
	assert.Equal(t, 1, f.sbx.agentsStarted(), "one start, not one per try")

	assert.ErrorIs(t, call(), errNoAnswer)
	assert.Equal(t, 1, f.sbx.agentsStarted(), "in the cooldown: the same error, no exec started")

	// After the cooldown a call tries again (and works once sbx answers). The real
	// handshake gets a bound a loaded machine keeps: 300 ms was only for the hang.
	f.sbx.hang = false
	ch.mu.Lock()
	ch.hungUntil = time.Time{}
	ch.HandshakeTimeout = 30 * time.Second
	ch.mu.Unlock()
	require.NoError(t, call())
}

// callTool calls c and decodes its result's JSON as the server's SDK path does.
func callTool(c mcpserver.Caller, call mcpserver.Call) (*mcp.CallToolResult, error) {
	raw, err := c.CallTool(context.Background(), call)
	if err != nil {
		return nil, err
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
