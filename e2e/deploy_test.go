//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// composePlugin is the docker compose v2 plugin scripts/setup.sh builds.
func composePlugin(t *testing.T) string {
	p, err := filepath.Abs("../.cache/compose/v2.40.3/docker-compose")
	require.NoError(t, err)
	_, err = os.Stat(p)
	require.NoError(t, err, "docker compose is built by scripts/setup.sh")
	return p
}

// deployEnv makes serve's sandboxes run their own dockerd with compose, and keeps owner
// records in the test's own state directory.
func (w *world) deployEnv(t *testing.T, extra ...string) []string {
	return append([]string{
		"SBXSIM_DOCKER=1", "SBXSIM_COMPOSE_PLUGIN=" + composePlugin(t),
		"DOCKER_SANDBOX_ENV_ALLOWLIST=SBXSIM_STATE,SBXSIM_DOCKER,SBXSIM_COMPOSE_PLUGIN",
		"XDG_STATE_HOME=" + w.stateHome(),
	}, extra...)
}

func (w *world) stateHome() string { return filepath.Join(w.state, "xdg-state") }

// tool calls a tool and returns its text, failing the test on isError unless wantErr.
func tool(t *testing.T, cs *mcp.ClientSession, name string, args any, wantErr bool) string {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(raw)})
	require.NoError(t, err, "%s %s", name, raw)
	if wantErr {
		require.True(t, res.IsError, "%s %s should fail:\n%s", name, raw, text(res))
	} else {
		require.False(t, res.IsError, "%s %s:\n%s", name, raw, text(res))
	}
	return text(res)
}

var urlRE = regexp.MustCompile(`http://127\.0\.0\.1:([0-9]+)/`)

func urls(s string) []string { return urlRE.FindAllString(s, -1) }

func httpGet(u string) (string, error) {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil}}
	resp, err := c.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// eventually retries get until it answers (a fresh httpd takes a moment).
func eventually(t *testing.T, u string) string {
	t.Helper()
	var last error
	for i := 0; i < 50; i++ {
		body, err := httpGet(u)
		if err == nil {
			return body
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s never answered: %v", u, last)
	return ""
}

func freeHostPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// sbxPorts is the test's own view of what the sandbox publishes.
func (w *world) sbxPorts(t *testing.T, sandbox string) []int {
	out, code := w.sim("ports", sandbox, "--json")
	require.Zero(t, code, out)
	var list []struct {
		HostPort int `json:"host_port"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &list), out)
	var ports []int
	for _, p := range list {
		ports = append(ports, p.HostPort)
	}
	return ports
}

func portOf(t *testing.T, u string) int {
	m := urlRE.FindStringSubmatch(u)
	require.NotNil(t, m, u)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}

// TestDeployThroughServe drives the docker_* tools through serve with a real MCP client
// against sbxsim's dockerd: build a busybox httpd app from the workspace, run it with
// "8080" and "H:8080", reach it with docker_curl and a plain host HTTP client,
// logs/exec/stop/start/rm, compose up/down, docker_init, the audit before and after, and
// docker_sandbox_rm. The world's decoy DOCKER_HOST socket must never be contacted.
func TestDeployThroughServe(t *testing.T) {
	w := newWorld(t)
	cs, _, stderr := w.serve(nil, nil, w.deployEnv(t)...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve stderr:\n%s", stderr.String())
		}
	})

	verify := tool(t, cs, "docker_verify", map[string]any{}, false)
	assert.Contains(t, verify, "All 11 checks passed", verify)
	sandbox := w.sandboxes()[0]

	// The app: docker_init's generic (busybox httpd) scaffold around a page.
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, "web"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "web", "index.html"), []byte("hello from the sandbox\n"), 0o644))
	out := tool(t, cs, "docker_init", map[string]any{"context": "web"}, false)
	assert.Contains(t, out, "port 8080")
	out = tool(t, cs, "docker_build", map[string]any{"context": "web", "tag": "web:1"}, false)
	assert.Contains(t, out, "Built web:1")
	assert.Contains(t, tool(t, cs, "docker_images", map[string]any{}, false), "web:1")

	// "8080": an ephemeral host port.
	out = tool(t, cs, "docker_run", map[string]any{"image": "web:1", "name": "web-a", "ports": []string{"8080"}}, false)
	require.Len(t, urls(out), 1, out)
	urlA := urls(out)[0]
	assert.Contains(t, eventually(t, urlA), "hello from the sandbox", "a plain host HTTP client")
	curl := tool(t, cs, "docker_curl", map[string]any{"url": urlA}, false)
	assert.Contains(t, curl, "HTTP 200")
	assert.Contains(t, curl, "hello from the sandbox")
	assert.Contains(t, tool(t, cs, "docker_curl", map[string]any{"url": strings.Replace(urlA, "127.0.0.1", "localhost", 1), "method": "HEAD"}, false), "HTTP 200")

	// "H:8080": the host port asked for.
	h := freeHostPort(t)
	out = tool(t, cs, "docker_run", map[string]any{"image": "web:1", "name": "web-b", "ports": []string{fmt.Sprintf("%d:8080", h)}}, false)
	urlB := fmt.Sprintf("http://127.0.0.1:%d/", h)
	assert.Contains(t, out, urlB)
	assert.Contains(t, eventually(t, urlB), "hello from the sandbox")
	assert.Contains(t, tool(t, cs, "docker_curl", map[string]any{"url": urlB + "index.html"}, false), "hello from the sandbox")

	assert.Contains(t, tool(t, cs, "docker_ps", map[string]any{}, false), "web-a")
	assert.Contains(t, tool(t, cs, "docker_logs", map[string]any{"id": "web-a", "tail": 50}, false), "response:200")
	assert.Contains(t, tool(t, cs, "docker_exec", map[string]any{"id": "web-a", "command": "cat /www/index.html"}, false), "hello from the sandbox")
	assert.Contains(t, tool(t, cs, "docker_exec", map[string]any{"id": "web-a", "command": []string{"sh", "-c", "echo $((6*7))"}}, false), "42")

	// stop unpublishes; start publishes again; rm unpublishes for good.
	portA := portOf(t, urlA)
	out = tool(t, cs, "docker_stop", map[string]any{"id": "web-a"}, false)
	assert.Contains(t, out, "Unpublished host ports: 127.0.0.1:"+strconv.Itoa(portA))
	assert.NotContains(t, w.sbxPorts(t, sandbox), portA)
	_, err := httpGet(urlA)
	assert.Error(t, err, "the stopped container's port is gone")
	out = tool(t, cs, "docker_start", map[string]any{"id": "web-a"}, false)
	require.Len(t, urls(out), 1, out)
	urlA = urls(out)[0]
	assert.Contains(t, eventually(t, urlA), "hello from the sandbox")
	portA = portOf(t, urlA)
	tool(t, cs, "docker_rm", map[string]any{"id": "web-a"}, false)
	assert.NotContains(t, w.sbxPorts(t, sandbox), portA, "port gone after rm")
	out = tool(t, cs, "docker_curl", map[string]any{"url": urlA}, true)
	assert.Contains(t, out, "not a port this sandbox published")
	tool(t, cs, "docker_rm", map[string]any{"id": "web-b"}, false)
	assert.NotContains(t, w.sbxPorts(t, sandbox), h)

	// compose: two services, one published port.
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, "stack", "site"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "stack", "site", "index.html"), []byte("compose site\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "stack", "Dockerfile"), []byte("FROM busybox:latest\nCOPY site /www\nCMD [\"httpd\",\"-f\",\"-p\",\"8080\",\"-h\",\"/www\"]\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "stack", "compose.yaml"), []byte(`services:
  web:
    build: .
    ports:
      - "8080"
  worker:
    image: busybox:latest
    command: ["sleep", "3600"]
    volumes:
      - ./site:/data:ro
`), 0o644))
	out = tool(t, cs, "docker_compose", map[string]any{"file": "stack/compose.yaml"}, false)
	require.Len(t, urls(out), 1, out)
	urlC := urls(out)[0]
	assert.Contains(t, eventually(t, urlC), "compose site")
	assert.Contains(t, tool(t, cs, "docker_curl", map[string]any{"url": urlC}, false), "compose site")
	ps := tool(t, cs, "docker_compose", map[string]any{"file": "stack/compose.yaml", "action": "ps"}, false)
	assert.Contains(t, ps, "worker")
	assert.Contains(t, tool(t, cs, "docker_verify", map[string]any{}, false), "All 11 checks passed", "the audit after a deploy, with ports published")
	out = tool(t, cs, "docker_compose", map[string]any{"file": "stack/compose.yaml", "action": "down"}, false)
	assert.Contains(t, out, "Unpublished host ports")
	assert.NotContains(t, w.sbxPorts(t, sandbox), portOf(t, urlC))

	// Status and resources.
	st := tool(t, cs, "docker_status", map[string]any{}, false)
	for _, want := range []string{"Sandbox: " + sandbox + " (running)", "Docker engine:", "CPUs:", "Memory:", "Workspace: " + w.ws + ", read-write", "Env forwarding: allowlist", "Teardown: remove"} {
		assert.Contains(t, st, want)
	}
	assert.Contains(t, tool(t, cs, "docker_resources", map[string]any{}, false), "Docker disk use")

	// No registry here: docker_pull fails with a message saying what to do.
	out = tool(t, cs, "docker_pull", map[string]any{"image": "alpine:3.20"}, true)
	assert.Contains(t, out, "could not pull alpine:3.20")

	tool(t, cs, "docker_prune", map[string]any{}, false)

	// docker_sandbox_rm: the sandbox goes, and the session fails closed.
	assert.Contains(t, tool(t, cs, "docker_sandbox_rm", map[string]any{}, false), "Removed sandbox "+sandbox)
	assert.NotContains(t, w.sandboxes(), sandbox)
	tool(t, cs, "docker_ps", map[string]any{}, true)
	res := call(t, cs, "bash", `{"command":"echo still here"}`)
	assert.True(t, res.IsError, "after docker_sandbox_rm nothing runs: %s", text(res))
	assert.NotContains(t, text(res), "still here")
}

// TestDockerInitEveryLanguage: docker_init writes each language's scaffold into the
// workspace (through the sandbox), refuses to overwrite without force, and overwrites with it.
func TestDockerInitEveryLanguage(t *testing.T) {
	w := newWorld(t)
	cs, _, _ := w.serve(nil, nil, w.deployEnv(t)...)
	from := map[string]string{"node": "FROM node:", "pnpm": "corepack enable", "go": "FROM golang:", "python": "FROM python:", "rust": "FROM rust:", "generic": "FROM busybox:latest"}
	port := map[string]string{"node": "3000", "pnpm": "3000", "go": "8080", "python": "8000", "rust": "8080", "generic": "8080"}
	for lang, want := range from {
		dir := filepath.Join("init", lang)
		out := tool(t, cs, "docker_init", map[string]any{"context": dir, "lang": lang, "compose": true}, false)
		assert.Contains(t, out, "port "+port[lang])
		df, err := os.ReadFile(filepath.Join(w.ws, dir, "Dockerfile"))
		require.NoError(t, err, lang)
		assert.Contains(t, string(df), want, lang)
		_, err = os.Stat(filepath.Join(w.ws, dir, ".dockerignore"))
		assert.NoError(t, err, lang)
		cf, err := os.ReadFile(filepath.Join(w.ws, dir, "compose.yaml"))
		require.NoError(t, err, lang)
		assert.Contains(t, string(cf), port[lang]+":"+port[lang], lang)
	}
	out := tool(t, cs, "docker_init", map[string]any{"context": "init/go", "lang": "go"}, true)
	assert.Contains(t, out, "exists")
	tool(t, cs, "docker_init", map[string]any{"context": "init/go", "lang": "python", "force": true}, false)
	df, err := os.ReadFile(filepath.Join(w.ws, "init/go/Dockerfile"))
	require.NoError(t, err)
	assert.Contains(t, string(df), "FROM python:")
}

// TestDeployRefusesEscapes: every confinement escape and option injection is refused with
// a clear error and nothing is started; docker_curl reaches neither an unpublished local
// port (its listener sees no connection) nor a non-loopback host.
func TestDeployRefusesEscapes(t *testing.T) {
	w := newWorld(t)
	cs, _, _ := w.serve(nil, nil, w.deployEnv(t)...)
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "Dockerfile"), []byte("FROM busybox:latest\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "compose.yaml"), []byte("services:\n  x:\n    image: busybox:latest\n"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(w.ws, "link-out")))
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, "app"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "app", "Dockerfile"), []byte("FROM busybox:latest\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "bad-build.yaml"), []byte("services:\n  x:\n    build: "+outside+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "bad-bind.yaml"), []byte("services:\n  x:\n    image: busybox:latest\n    volumes:\n      - /etc:/host-etc\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "bad-link.yaml"), []byte("services:\n  x:\n    image: busybox:latest\n    volumes:\n      - ./link-out:/x\n"), 0o644))

	tool(t, cs, "docker_ps", map[string]any{}, false) // creates the sandbox
	sandbox := w.sandboxes()[0]
	state := func() string {
		ps, _ := w.sim("exec", sandbox, "--", "docker", "ps", "-aq")
		images, _ := w.sim("exec", sandbox, "--", "docker", "images", "-aq")
		return ps + "|" + images
	}
	before := state()
	escapes := []struct {
		tool string
		args map[string]any
	}{
		{"docker_build", map[string]any{"context": "..", "tag": "x:1"}},
		{"docker_build", map[string]any{"context": outside, "tag": "x:1"}},
		{"docker_build", map[string]any{"context": "link-out", "tag": "x:1"}},
		{"docker_build", map[string]any{"context": "app", "tag": "x:1", "dockerfile": "../link-out/Dockerfile"}},
		{"docker_build", map[string]any{"context": "app", "tag": "x:1", "dockerfile": outside + "/Dockerfile"}},
		{"docker_build", map[string]any{"context": "-f", "tag": "x:1"}},
		{"docker_build", map[string]any{"context": "app", "tag": "--output=type=local,dest=/tmp/x"}},
		{"docker_build", map[string]any{"context": "app", "tag": "x:1", "buildargs": `{"A":"x\ny"}`}},
		{"docker_run", map[string]any{"image": "busybox:latest", "volumes": []string{"/etc:/host"}}},
		{"docker_run", map[string]any{"image": "busybox:latest", "volumes": []string{"../:/host"}}},
		{"docker_run", map[string]any{"image": "busybox:latest", "volumes": []string{"link-out:/host"}}},
		{"docker_run", map[string]any{"image": "busybox:latest", "volumes": []string{"app:/x,readonly=false"}}},
		{"docker_run", map[string]any{"image": "--volume=/:/host", "command": "true"}},
		{"docker_run", map[string]any{"image": "busybox:latest", "name": "--privileged"}},
		{"docker_run", map[string]any{"image": "busybox:latest", "env": []string{"A=1\n--privileged"}}},
		{"docker_run", map[string]any{"image": "busybox:latest", "memory": "--privileged"}},
		{"docker_run", map[string]any{"image": "busybox:latest", "workdir": "rel"}},
		{"docker_run", map[string]any{"image": "busybox:latest", "ports": []string{"0.0.0.0:80:80"}}},
		{"docker_run", map[string]any{"image": "busybox:latest", "ports": []string{"--publish=80"}}},
		{"docker_run", map[string]any{"image": "busybox:latest", "command": []string{"sh", "-c", "echo\x00"}}},
		{"docker_compose", map[string]any{"file": "../compose.yaml"}},
		{"docker_compose", map[string]any{"file": outside + "/compose.yaml"}},
		{"docker_compose", map[string]any{"file": "link-out/compose.yaml"}},
		{"docker_compose", map[string]any{"file": "bad-build.yaml"}},
		{"docker_compose", map[string]any{"file": "bad-bind.yaml"}},
		{"docker_compose", map[string]any{"file": "bad-link.yaml"}},
		{"docker_compose", map[string]any{"file": "bad-bind.yaml", "extraArgs": []string{"--file=/etc/x.yaml"}}},
		{"docker_compose", map[string]any{"file": "bad-bind.yaml", "service": "-x"}},
		{"docker_init", map[string]any{"context": "../x"}},
		{"docker_init", map[string]any{"context": outside}},
		{"docker_init", map[string]any{"context": "link-out"}},
		{"docker_logs", map[string]any{"id": "--since=0"}},
		{"docker_exec", map[string]any{"id": "-it", "command": "sh"}},
		{"docker_stop", map[string]any{"id": "a\nb"}},
		{"docker_pull", map[string]any{"image": "-q"}},
	}
	for _, e := range escapes {
		out := tool(t, cs, e.tool, e.args, true)
		assert.Contains(t, out, "refused", "%s %v: %s", e.tool, e.args, out)
	}
	assert.Equal(t, before, state(), "nothing was built, started or pulled")
	_, err := os.Stat(filepath.Join(outside, ".dockerignore"))
	assert.ErrorIs(t, err, os.ErrNotExist, "docker_init wrote nothing outside")

	// docker_curl: an unpublished local port with a listener sees no connection.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	var hits atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			hits.Add(1)
			c.Close()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	for _, u := range []string{
		fmt.Sprintf("http://127.0.0.1:%d/", port), fmt.Sprintf("http://localhost:%d/", port), fmt.Sprintf("http://[::1]:%d/", port),
		"http://example.com/", "http://10.0.0.1/", fmt.Sprintf("http://127.0.0.2:%d/", port),
		fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", port), fmt.Sprintf("https://127.0.0.1:%d/", port),
		fmt.Sprintf("http://user:pw@127.0.0.1:%d/", port), "file:///etc/passwd",
	} {
		out := tool(t, cs, "docker_curl", map[string]any{"url": u}, true)
		assert.Contains(t, out, "refused", u)
	}
	out := tool(t, cs, "docker_curl", map[string]any{"url": fmt.Sprintf("http://127.0.0.1:%d/", port), "body": strings.Repeat("x", 1<<20+1), "method": "POST"}, true)
	assert.Contains(t, out, "limit")
	time.Sleep(200 * time.Millisecond)
	assert.Zero(t, hits.Load(), "docker_curl connected to a port the sandbox did not publish")
}

// TestServeToolModes: PI_SBX_MODE=tools leaves serve with pi's seven, deploy with the
// docker_* tools, both (the default for MCP clients) with all of them.
func TestServeToolModes(t *testing.T) {
	pi := []string{"bash", "read", "write", "edit", "grep", "find", "ls"}
	for _, mode := range []string{"tools", "deploy", "both", ""} {
		t.Run(mode, func(t *testing.T) {
			w := newWorld(t)
			cs, _, _ := w.serve(nil, nil, "PI_SBX_MODE="+mode)
			list, err := cs.ListTools(context.Background(), nil)
			require.NoError(t, err)
			var names, docker, seven []string
			for _, tl := range list.Tools {
				names = append(names, tl.Name)
				if strings.HasPrefix(tl.Name, "docker_") {
					docker = append(docker, tl.Name)
				} else {
					seven = append(seven, tl.Name)
				}
			}
			switch mode {
			case "tools":
				assert.ElementsMatch(t, pi, names)
			case "deploy":
				assert.Empty(t, seven, names)
				assert.Len(t, docker, 19)
			default:
				assert.ElementsMatch(t, pi, seven)
				assert.Len(t, docker, 19)
			}
		})
	}
}

// TestDeployReadOnlyWorkspace: with DOCKER_SANDBOX_WORKSPACE_RO=1 the project still
// builds, docker_run's workspace binds are :ro, a compose project with a writable bind of
// the workspace is refused, and docker_init cannot write.
func TestDeployReadOnlyWorkspace(t *testing.T) {
	w := newWorld(t)
	cs, _, _ := w.serve(nil, nil, w.deployEnv(t, "DOCKER_SANDBOX_WORKSPACE_RO=1")...)
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, "app"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "app", "Dockerfile"), []byte("FROM busybox:latest\nCOPY . /app\n"), 0o644))
	assert.Contains(t, tool(t, cs, "docker_build", map[string]any{"context": "app", "tag": "ro:1"}, false), "Built ro:1")
	tool(t, cs, "docker_run", map[string]any{"image": "busybox:latest", "name": "ro-c", "volumes": []string{"app:/data:rw"}, "command": "sleep 300"}, false)
	sandbox := w.sandboxes()[0]
	out, code := w.sim("exec", sandbox, "--", "docker", "inspect", "ro-c", "--format", "{{range .Mounts}}{{.Source}} rw={{.RW}}{{end}}")
	require.Zero(t, code, out)
	assert.Equal(t, filepath.Join(w.ws, "app")+" rw=false", strings.TrimSpace(out), "the bind was made :ro although rw was asked")
	out = tool(t, cs, "docker_exec", map[string]any{"id": "ro-c", "command": "touch /data/x"}, true)
	assert.Contains(t, out, "Read-only file system")

	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "compose.yaml"), []byte("services:\n  x:\n    image: busybox:latest\n    volumes:\n      - ./app:/data\n"), 0o644))
	out = tool(t, cs, "docker_compose", map[string]any{}, true)
	assert.Contains(t, out, "must be read-only")
	out = tool(t, cs, "docker_init", map[string]any{"context": "app", "force": true}, true)
	assert.Contains(t, out, "Read-only file system")
	assert.Contains(t, tool(t, cs, "docker_status", map[string]any{}, false), "read-only")
}
