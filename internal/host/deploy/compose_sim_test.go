//go:build e2e

package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeFiles writes name → content under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// containerMounts lists the mount sources of every container in the sandbox.
func (w *simWorld) containerMounts(name string) string {
	out, code := w.sim("exec", name, "--", "sh", "-c", `ids=$(docker ps -aq); [ -z "$ids" ] || docker inspect --format '{{.Name}}:{{range .Mounts}} {{.Source}}{{end}}' $ids`)
	require.Zero(w.t, code, out)
	return out
}

const svc = "services:\n  s:\n    image: busybox:latest\n    command: [\"sleep\", \"300\"]\n"

// TestComposeChecksTheModelComposeRuns: each project below would have given a container
// more than the workspace (the daemon's socket, the sandbox's /, its namespaces, raised
// privileges). docker_compose reads it as compose does — `docker compose config` in the
// sandbox, after interpolation, include and extends — and refuses it, naming the key;
// nothing starts. Before, the check read only build contexts and bind mounts.
func TestComposeChecksTheModelComposeRuns(t *testing.T) {
	w := newComposeWorld(t)
	const sandbox = "deploy-compose"
	w.create(sandbox)
	d := w.deployer(sandbox, w.environ())
	// A link that leads into the workspace on the host, and to /var/run in the sandbox.
	hostTmp := fmt.Sprintf("/tmp/pi-sbx-twosided-%d", os.Getpid())
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, "real"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(w.ws, "real"), hostTmp))
	t.Cleanup(func() { os.Remove(hostTmp) })
	out, code := w.sim("exec", sandbox, "--", "ln", "-s", "/var/run", hostTmp)
	require.Zero(t, code, out)

	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"driver_opts volume", map[string]string{"compose.yaml": svc + "    volumes: [\"data:/data\"]\nvolumes:\n  data:\n    driver_opts: {type: none, o: bind, device: /var/run}\n"}, `volume data: key "driver_opts" is refused`},
		{"external volume", map[string]string{"compose.yaml": svc + "    volumes: [\"data:/data\"]\nvolumes:\n  data:\n    external: true\n"}, `key "external" is refused`},
		{"secret file", map[string]string{"compose.yaml": svc + "    secrets: [s]\nsecrets:\n  s:\n    file: /var/run/docker.sock\n"}, `secret s: file "/var/run/docker.sock" resolves outside the workspace`},
		{"config file", map[string]string{"compose.yaml": svc + "    configs: [c]\nconfigs:\n  c:\n    file: /etc/passwd\n"}, `config c: file "/etc/passwd" resolves outside`},
		{"build secret", map[string]string{"Dockerfile": "FROM busybox:latest\n", "compose.yaml": "services:\n  s:\n    build:\n      context: .\n      secrets: [k]\nsecrets:\n  k:\n    file: /var/run/docker.sock\n"}, `secret k: file`},
		{"cap_add", map[string]string{"compose.yaml": svc + "    cap_add: [SYS_ADMIN]\n"}, `service s: "cap_add" is refused`},
		{"security_opt", map[string]string{"compose.yaml": svc + "    security_opt: [\"seccomp:unconfined\", \"apparmor:unconfined\"]\n"}, `"security_opt" is refused`},
		{"privileged", map[string]string{"compose.yaml": svc + "    privileged: true\n"}, `"privileged" is refused`},
		{"devices", map[string]string{"compose.yaml": svc + "    devices: [\"/dev/null:/dev/x\"]\n"}, `"devices" is refused`},
		{"pid host", map[string]string{"compose.yaml": svc + "    pid: host\n"}, `pid "host" is refused`},
		{"ipc host", map[string]string{"compose.yaml": svc + "    ipc: host\n"}, `ipc "host" is refused`},
		{"network_mode host", map[string]string{"compose.yaml": svc + "    network_mode: host\n"}, `network_mode "host" is refused`},
		{"userns_mode host", map[string]string{"compose.yaml": svc + "    userns_mode: host\n"}, `userns_mode "host" is refused`},
		{"cgroup host", map[string]string{"compose.yaml": svc + "    cgroup: host\n"}, `cgroup "host" is refused`},
		{"use_api_socket", map[string]string{"compose.yaml": svc + "    use_api_socket: true\n"}, `"use_api_socket" is refused`},
		{"external network", map[string]string{"compose.yaml": svc + "    networks: [h]\nnetworks:\n  h:\n    external: true\n    name: host\n"}, `network h: key "external" is refused`},
		{"build ssh", map[string]string{"Dockerfile": "FROM busybox:latest\n", "compose.yaml": "services:\n  s:\n    build:\n      context: .\n      ssh: [default]\n"}, `build key "ssh" is refused`},
		{"propagation", map[string]string{"compose.yaml": svc + "    volumes:\n      - {type: bind, source: ., target: /w, bind: {propagation: rshared}}\n"}, `bind propagation "rshared" is refused`},
		{"interpolated bind", map[string]string{".env": "SRC=/var/run\n", "compose.yaml": svc + "    volumes: [\"${SRC}:/x\"]\n"}, `bind mount "/var/run" resolves outside`},
		{"include", map[string]string{"other.yaml": svc + "    cap_add: [ALL]\n", "compose.yaml": "include: [other.yaml]\n"}, `"cap_add" is refused`},
		{"extends", map[string]string{"base.yaml": svc + "    privileged: true\n", "compose.yaml": "services:\n  s:\n    extends: {file: base.yaml, service: s}\n"}, `"privileged" is refused`},
		{"unknown key", map[string]string{"compose.yaml": svc + "    x_not_compose: 1\n"}, ``}, // compose itself refuses it
		{"two-sided link", map[string]string{"compose.yaml": svc + "    volumes: [\"./link:/x\"]\n"}, `bind mount "c22/link" resolves outside the workspace in the sandbox`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(w.ws, fmt.Sprintf("c%02d", i))
			writeFiles(t, dir, tt.files)
			if tt.name == "two-sided link" {
				require.NoError(t, os.Symlink(hostTmp, filepath.Join(dir, "link")))
			}
			out, isErr := callText(t, d, "docker_compose", map[string]any{"file": filepath.Join(dir, "compose.yaml")})
			require.True(t, isErr, out)
			assert.Contains(t, out, tt.want)
			assert.NotContains(t, out, w.ws, "errors name workspace-relative paths only")
			assert.Empty(t, strings.TrimSpace(w.containerMounts(sandbox)), "nothing was started")
		})
	}

	// What a project may do still works: a read-only bind, a named volume, a secret file
	// in the workspace, a build; the container mounts exactly the checked sources.
	dir := filepath.Join(w.ws, "ok")
	writeFiles(t, dir, map[string]string{"site/index.html": "hi\n", "token": "t0k\n", "Dockerfile": "FROM busybox:latest\n",
		"compose.yaml": "services:\n  s:\n    build: .\n    command: [\"sh\", \"-c\", \"cat /run/secrets/tok; sleep 300\"]\n    volumes: [\"./site:/www:ro\", \"data:/data\", {type: tmpfs, target: /t}]\n    secrets: [tok]\nvolumes:\n  data: {}\nsecrets:\n  tok:\n    file: ./token\n"})
	out, isErr := callText(t, d, "docker_compose", map[string]any{"file": "ok/compose.yaml"})
	require.False(t, isErr, out)
	mounts := w.containerMounts(sandbox)
	assert.Contains(t, mounts, filepath.Join(dir, "site"))
	assert.Contains(t, mounts, filepath.Join(dir, "token"))
	out, isErr = callText(t, d, "docker_compose", map[string]any{"file": "ok/compose.yaml", "action": "down"})
	require.False(t, isErr, out)
}

// TestComposeFileSwapCannotWin: while the test swaps the compose file between a harmless
// project and one binding the sandbox's /var/run (the daemon's socket), docker_compose up
// runs again and again. compose reads the file once, in the check; `up` gets the checked
// model on stdin, so no container ever gets /var/run. (Before, `up` read the file again:
// 8 of 20 calls were won.)
func TestComposeFileSwapCannotWin(t *testing.T) {
	w := newComposeWorld(t)
	const sandbox = "deploy-swap"
	w.create(sandbox)
	d := w.deployer(sandbox, w.environ())
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, "app"), 0o755))
	good := []byte(svc + "    volumes: [\"./app:/x:ro\"]\n")
	bad := []byte(svc + "    volumes: [\"/var/run:/x\"]\n")
	file := filepath.Join(w.ws, "compose.yaml")
	require.NoError(t, os.WriteFile(file, good, 0o644))

	stop := make(chan struct{})
	var swaps atomic.Int64
	go func() {
		tmp := file + ".swap"
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			content := good
			if i%2 == 1 {
				content = bad
			}
			if os.WriteFile(tmp, content, 0o644) == nil && os.Rename(tmp, file) == nil {
				swaps.Add(1)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	const calls = 20
	won, refused := 0, 0
	for i := 0; i < calls; i++ {
		out, isErr := callText(t, d, "docker_compose", map[string]any{"action": "up"})
		if isErr {
			require.Contains(t, out, "outside the workspace", out)
			refused++
		}
		if strings.Contains(w.containerMounts(sandbox), "/var/run") {
			won++
			w.sim("exec", sandbox, "--", "sh", "-c", "docker rm -f $(docker ps -aq)")
		}
	}
	close(stop)
	t.Logf("%d calls, %d refused at the check, %d won by the swap; %d swaps", calls, refused, won, swaps.Load())
	assert.Zero(t, won, "a container got the daemon's socket")
	assert.Positive(t, refused, "the swap did happen during checks")
	assert.Less(t, refused, calls, "some calls ran")
}

// TestComposeBindRaceCannotWin: as TestRunVolumeRaceCannotWin, for docker_compose up: a
// container that can write the workspace flips a bind source to a link to /var/run while
// compose recreates the service again and again. The sources are checked again with the
// writers held until compose has started the containers, so none gets the daemon's socket.
func TestComposeBindRaceCannotWin(t *testing.T) {
	w := newComposeWorld(t)
	const sandbox = "deploy-compose-race"
	w.create(sandbox)
	d := w.deployer(sandbox, w.environ())
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, "d"), 0o755))
	writeFiles(t, w.ws, map[string]string{"compose.yaml": svc + "    volumes: [\"./d:/x\"]\n"})
	out, isErr := callText(t, d, "docker_run", map[string]any{"image": "busybox:latest", "name": "flipper", "volumes": []string{".:/w"},
		"command": []string{"sh", "-c", "cd /w; while :; do mv d d.real; ln -s /var/run d; usleep 20000; rm d; mv d.real d; usleep 20000; done"}})
	require.False(t, isErr, out)

	const calls = 20
	won, ran := 0, 0
	for i := 0; i < calls; i++ {
		time.Sleep(time.Duration(5+i%4*11) * time.Millisecond)
		_, isErr := callText(t, d, "docker_compose", map[string]any{"extraArgs": []string{"--force-recreate"}})
		if isErr {
			continue
		}
		ran++
		ls, _ := w.sim("exec", sandbox, "--", "sh", "-c", "docker exec $(docker ps -q --filter label=com.docker.compose.service=s) ls /x")
		if strings.Contains(ls, "docker.sock") {
			won++
		}
	}
	t.Logf("%d calls: %d ran, %d got the daemon's socket", calls, ran, won)
	assert.Zero(t, won, "a compose container mounted /var/run")
	assert.Positive(t, ran)
}
