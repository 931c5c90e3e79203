//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// packages are the npm packages' names, from the one place that has them.
type packages struct {
	Pi        string `json:"pi"`
	Platforms []struct {
		Package string `json:"package"`
		GOOS    string `json:"goos"`
		GOARCH  string `json:"goarch"`
	} `json:"platforms"`
}

func readPackages(t *testing.T) packages {
	t.Helper()
	b, err := os.ReadFile("../npm/platforms.json")
	require.NoError(t, err)
	var p packages
	require.NoError(t, json.Unmarshal(b, &p))
	return p
}

// host is the package of this machine's platform.
func (p packages) host(t *testing.T) string {
	t.Helper()
	for _, pl := range p.Platforms {
		if pl.GOOS == runtime.GOOS && pl.GOARCH == runtime.GOARCH {
			return pl.Package
		}
	}
	t.Fatalf("npm/platforms.json has no package for %s/%s", runtime.GOOS, runtime.GOARCH)
	return ""
}

// release is what `make release` wrote: PI_SBX_RELEASE names it (scripts/test.sh runs
// `make release` once and points the tests at dist/release); without it the first test
// that needs one runs scripts/release.sh beside the test's binaries.
type release struct {
	dir, version string
}

var releaseOnce struct {
	sync.Once
	rel release
	err error
}

func releaseDir(t *testing.T, node string) release {
	t.Helper()
	pi := readPackages(t).Pi
	releaseOnce.Do(func() {
		if dir := os.Getenv("PI_SBX_RELEASE"); dir != "" {
			releaseOnce.rel, releaseOnce.err = readRelease(dir, pi)
			return
		}
		// Beside the test's binaries: TestMain removes them at the end.
		releaseOnce.rel, releaseOnce.err = buildRelease(node, "0.0.0-e2e", filepath.Join(filepath.Dir(backendBin), "release"), pi)
	})
	require.NoError(t, releaseOnce.err)
	return releaseOnce.rel
}

// buildRelease runs scripts/release.sh VERSION DIR.
func buildRelease(node, version, dir, pi string) (release, error) {
	cmd := exec.Command("bash", "scripts/release.sh", version, dir)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+":"+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return release{}, fmt.Errorf("scripts/release.sh: %w\n%s", err, out)
	}
	return readRelease(dir, pi)
}

// readRelease finds the version of the release in dir from its pi package's file name
// (npm pack's PI-VERSION.tgz).
func readRelease(dir, pi string) (release, error) {
	tgz, err := filepath.Glob(filepath.Join(dir, "npm", pi+"-[0-9]*.tgz"))
	if err == nil && len(tgz) != 1 {
		err = fmt.Errorf("%s/npm holds %d %s-[0-9]*.tgz, want 1", dir, len(tgz), pi)
	}
	if err != nil {
		return release{}, err
	}
	v := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(tgz[0]), pi+"-"), ".tgz")
	return release{dir: dir, version: v}, nil
}

// nextVersion is the release after v (x.y.z[-pre] → x.y.(z+1)), as pi update sees it.
func nextVersion(t *testing.T, v string) string {
	t.Helper()
	core, _, _ := strings.Cut(v, "-")
	parts := strings.Split(core, ".")
	require.Len(t, parts, 3, "version %q", v)
	patch, err := strconv.Atoi(parts[2])
	require.NoError(t, err)
	return fmt.Sprintf("%s.%s.%d", parts[0], parts[1], patch+1)
}

// registry is a real npm registry (verdaccio, installed into .cache/ by scripts/setup.sh)
// on loopback, with no uplink: only what the test publishes is there.
type registry struct {
	url    string
	npmrc  string
	node   string
	prefix string // PATH entries for npm and node
}

func startRegistry(t *testing.T, root, node string) *registry {
	t.Helper()
	verdaccio := filepath.Join(root, ".cache/verdaccio/node_modules/verdaccio/bin/verdaccio")
	_, err := os.Stat(verdaccio)
	require.NoError(t, err, "run scripts/setup.sh first (verdaccio)")
	dir := t.TempDir()
	config := `storage: ./storage
auth:
  htpasswd:
    file: ./htpasswd
    max_users: 10
uplinks: {}
packages:
  '**':
    access: $all
    publish: $authenticated
max_body_size: 200mb
log: { type: stdout, format: pretty, level: warn }
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(config), 0o644))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()

	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, verdaccio, "--config", filepath.Join(dir, "config.yaml"), "--listen", addr)
	cmd.Dir = dir
	var log testbin.SyncBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	r := &registry{url: "http://" + addr + "/", node: node, prefix: filepath.Dir(node)}
	require.Eventually(t, func() bool {
		resp, err := http.Get(r.url + "-/ping")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	}, 60*time.Second, 100*time.Millisecond, "verdaccio answers: %s", &log)

	// A user to publish as; its token goes into an npmrc of the test's own.
	body := `{"name":"release-test","password":"release-test-password"}`
	req, err := http.NewRequest(http.MethodPut, r.url+"-/user/org.couchdb.user:release-test", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var user struct{ Token string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&user))
	require.NotEmpty(t, user.Token, "verdaccio created the user")
	r.npmrc = filepath.Join(dir, "npmrc")
	npmrc := fmt.Sprintf("registry=%s\n//%s/:_authToken=%s\n", r.url, addr, user.Token)
	require.NoError(t, os.WriteFile(r.npmrc, []byte(npmrc), 0o600))
	return r
}

// env is what every npm or pi process of the test gets: the registry, and a PATH with
// node and the system's tools but neither Go nor any pi-sbx-backend.
func (r *registry) env(home string) []string {
	return []string{
		"HOME=" + home,
		"PATH=" + r.prefix + ":/usr/sbin:/usr/bin:/sbin:/bin",
		"npm_config_userconfig=" + r.npmrc,
		"npm_config_registry=" + r.url,
		"npm_config_cache=" + filepath.Join(home, ".npm"),
		"npm_config_update_notifier=false",
	}
}

// publish puts every npm package of rel into the registry.
func (r *registry) publish(t *testing.T, rel release, home string) {
	t.Helper()
	tgzs, err := filepath.Glob(filepath.Join(rel.dir, "npm", "*.tgz"))
	require.NoError(t, err)
	require.Len(t, tgzs, 6, "the pi package and five platform packages")
	for _, tgz := range tgzs {
		cmd := command("npm", r.env(home), "publish", "--tag", "latest", tgz)
		cmd.Dir = home
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "npm publish %s: %s", filepath.Base(tgz), out)
	}
}

// TestReleaseFromRegistry publishes every npm package of the release into a registry on
// loopback, installs the pi package with `pi install npm:pi-sbx` (PATH has neither Go nor
// pi-sbx-backend: the binary can only come from the platform package) and runs a pi
// session whose tool call runs in an sbxsim sandbox, kept for the next session (warm
// re-use). Then a newer release is published and `pi update` brings binary and agents
// together: the next session re-attaches the warm sandbox and runs the new agent, the old
// one gone from it. Last, the platform package's binary is corrupted: the next session
// refuses it with one clear message and runs nothing.
func TestReleaseFromRegistry(t *testing.T) {
	root, node := piEnv(t)
	rel := releaseDir(t, node)
	names := readPackages(t)
	hostPkg := names.host(t)
	reg := startRegistry(t, root, node)
	home := t.TempDir()
	env := reg.env(home)
	for _, prog := range []string{"go", "pi-sbx-backend"} {
		path := strings.TrimPrefix(env[1], "PATH=")
		for _, dir := range filepath.SplitList(path) {
			_, err := os.Stat(filepath.Join(dir, prog))
			require.True(t, os.IsNotExist(err), "%s is in %s", prog, dir)
		}
	}

	// The newer release, built while this one is tested (its compiles are cached).
	next := make(chan release, 1)
	go func() {
		r, err := buildRelease(node, nextVersion(t, rel.version), filepath.Join(t.TempDir(), "next"), names.Pi)
		assert.NoError(t, err)
		next <- r
	}()
	reg.publish(t, rel, home)

	pi := filepath.Join(root, "extension/node_modules/.bin/pi")
	cmd := command(pi, env, "install", "npm:"+names.Pi)
	cmd.Dir = home
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "pi install npm:%s: %s", names.Pi, out)
	modules := filepath.Join(home, ".pi/agent/npm/node_modules")
	for _, pl := range names.Platforms {
		_, err := os.Stat(filepath.Join(modules, pl.Package))
		assert.Equal(t, pl.Package == hostPkg, err == nil, "npm installs this platform's package only: %s", pl.Package)
	}
	bin := filepath.Join(modules, hostPkg, "bin/pi-sbx-backend")
	out, err = exec.Command(bin, "version").CombinedOutput()
	require.NoError(t, err)
	assert.Regexp(t, `^pi-sbx-backend `+regexp.QuoteMeta(rel.version)+`\n`, string(out))
	assert.Regexp(t, `agent linux/arm64: sha256 [0-9a-f]{64} \(embedded\)`, string(out), "the other architecture's agent comes inside it")
	_, err = os.Stat(filepath.Join(modules, "@earendil-works"))
	assert.True(t, os.IsNotExist(err), "pi's own packages are peers, not installed with it")

	w := newWorld(t)
	gitInit(t, w.ws)
	session := func() (events, stderr string) {
		t.Helper()
		// pi's CLI (its SDK) with the scripted model of extension/test/faux-provider.ts:
		// one bash call, then "turn 1 done"; --mode json prints the tool's result.
		cmd := command(pi, w.env(append(env, "PI_SBX_BACKEND=", "DOCKER_SANDBOX_REUSE=1")...),
			"-p", "--mode", "json", "--provider", "faux", "--model", "scripted", "-e", filepath.Join(root, "extension/test/faux-provider.ts"), "go")
		cmd.Dir = w.ws
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		require.NoError(t, cmd.Run(), "pi: %s\n%s", o.String(), e.String())
		return o.String(), e.String()
	}
	agents := func(box string) string {
		t.Helper()
		out, code := w.sim("exec", box, "sh", "-c", "cd /tmp && ls pi-sbx-agent-*")
		require.Zero(t, code, "%s", out)
		return strings.TrimSpace(out)
	}
	events, stderr := session()
	boxes := w.sandboxes()
	require.Len(t, boxes, 1, "one warm sandbox, kept: %s", stderr)
	box := boxes[0]
	assert.Contains(t, toolOutputs(t, events), "tool-ran-in-"+box+"\n", "the model's bash call ran in the sandbox")
	assert.Regexp(t, `^pi-sbx-agent-`+regexp.QuoteMeta(rel.version)+`-[0-9a-f]{8}$`, agents(box))

	// The upgrade: pi update takes the new pi package and, with it, its platform package.
	newer := <-next
	require.NotEmpty(t, newer.dir)
	reg.publish(t, newer, home)
	cmd = command(pi, env, "update", "npm:"+names.Pi)
	cmd.Dir = home
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "pi update: %s", out)
	out, err = exec.Command(bin, "version").CombinedOutput()
	require.NoError(t, err)
	assert.Regexp(t, `^pi-sbx-backend `+regexp.QuoteMeta(newer.version)+`\n`, string(out), "pi update replaced the binary")
	events, stderr = session()
	assert.Equal(t, []string{box}, w.sandboxes(), "the warm sandbox was re-attached: %s", stderr)
	assert.Contains(t, toolOutputs(t, events), "tool-ran-in-"+box+"\n")
	assert.Regexp(t, `^pi-sbx-agent-`+regexp.QuoteMeta(newer.version)+`-[0-9a-f]{8}$`, agents(box), "the old agent was replaced, not reused")

	// One byte of the binary changed: refused before it runs, with one message.
	b, err := os.ReadFile(bin)
	require.NoError(t, err)
	b[len(b)/2] ^= 0xff
	require.NoError(t, os.WriteFile(bin, b, 0o755))
	events, stderr = session()
	msg := "refusing the binary of " + hostPkg + " (" + bin + "): it is not the pi-sbx-backend " + newer.version +
		" this package was released with"
	assert.Contains(t, stderr, msg)
	assert.Contains(t, stderr, "reinstall the package (pi install npm:"+names.Pi+")")
	outputs := toolOutputs(t, events)
	assert.NotContains(t, outputs, "tool-ran-in-")
	assert.Contains(t, outputs, msg, "the tool call fails with the same message")
	assert.Equal(t, []string{box}, w.sandboxes(), "no sandbox was made")
}

// toolOutputs is the text of every tool result in pi's --mode json event stream.
func toolOutputs(t *testing.T, events string) string {
	t.Helper()
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(events))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var e struct {
			Type   string `json:"type"`
			Result struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Type != "tool_execution_end" {
			continue
		}
		for _, c := range e.Result.Content {
			b.WriteString(c.Text + "\n")
		}
	}
	require.NoError(t, sc.Err())
	return b.String()
}
