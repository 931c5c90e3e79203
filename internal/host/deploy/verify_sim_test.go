//go:build e2e

package deploy

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// leakyPolicy forwards docker variables too: a broken scrubber.
type leakyPolicy struct{ sbx.EnvPolicy }

func (p leakyPolicy) VMEnv(environ []string) []string {
	out := p.EnvPolicy.VMEnv(environ)
	for _, kv := range environ {
		if len(kv) > 7 && kv[:7] == "DOCKER_" {
			out = append(out, kv)
		}
	}
	return out
}

// openPolicy forwards every variable but docker ones: passthrough without saying so.
type openPolicy struct{ sbx.EnvPolicy }

func (p openPolicy) VMEnv(environ []string) []string {
	return sbx.EnvPolicy{Passthrough: true}.VMEnv(environ)
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestVerifyChecksCanFail: the audit passes on a healthy sandbox, and each check fails —
// it alone — when the guarantee it guards is broken.
func TestVerifyChecksCanFail(t *testing.T) {
	tests := []struct {
		check string
		// breakIt breaks one guarantee and returns the deployer to audit.
		breakIt func(w *simWorld, name string) *Deployer
	}{
		{"", func(w *simWorld, name string) *Deployer { return w.deployer(name, w.environ()) }},
		{"transport", func(w *simWorld, name string) *Deployer {
			// Docker calls go through another program than the sbx one.
			wrapper := filepath.Join(t.TempDir(), "not-sbx")
			require.NoError(t, os.WriteFile(wrapper, []byte("#!/bin/sh\nexec "+simBin+" \"$@\"\n"), 0o755))
			d := w.deployer(name, w.environ())
			d.Sbx.Bin = wrapper
			return d
		}},
		{"env scrub", func(w *simWorld, name string) *Deployer {
			d := w.deployer(name, w.environ())
			d.Policy = leakyPolicy{d.Settings.Policy}
			return d
		}},
		{"env forwarding", func(w *simWorld, name string) *Deployer {
			d := w.deployer(name, w.environ())
			d.Policy = openPolicy{d.Settings.Policy}
			return d
		}},
		{"daemon pinning", func(w *simWorld, name string) *Deployer {
			d := w.deployer(name, w.environ())
			d.unpinned = true
			return d
		}},
		{"mounts", func(w *simWorld, name string) *Deployer {
			// The host home (with a docker config) mounted into the sandbox.
			require.NoError(t, os.MkdirAll(filepath.Join(w.home, ".docker"), 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(w.home, ".docker", "config.json"), []byte("{}"), 0o600))
			out, code := w.sim("rm", "-f", name)
			require.Zero(t, code, out)
			w.create(name, w.home)
			return w.deployer(name, w.environ())
		}},
		{"contexts", func(w *simWorld, name string) *Deployer {
			out, code := w.sim("exec", name, "--", "docker", "context", "create", "elsewhere", "--docker", "host=tcp://10.9.9.9:2375")
			require.Zero(t, code, out)
			return w.deployer(name, w.environ())
		}},
		{"host socket", func(w *simWorld, name string) *Deployer {
			// The host's DOCKER_HOST socket lies in a path the sandbox sees.
			sock := filepath.Join(w.ws, "host-docker.sock")
			l, err := net.Listen("unix", sock)
			require.NoError(t, err)
			t.Cleanup(func() { l.Close() })
			return w.deployer(name, w.environ("DOCKER_HOST=unix://"+sock))
		}},
		{"ssh agent", func(w *simWorld, name string) *Deployer {
			// An SSH agent is forwarded (the creator's), and then the setting says off:
			// a reachable agent the user believes gone.
			sock := filepath.Join(t.TempDir(), "agent.sock")
			l, err := net.Listen("unix", sock)
			require.NoError(t, err)
			t.Cleanup(func() { l.Close() })
			out, code := w.sim("rm", "-f", name)
			require.Zero(t, code, out)
			cmd := exec.Command(simBin, "create", "--name", name, "shell", w.ws)
			cmd.Env = append(w.simEnv(), "SSH_AUTH_SOCK="+sock)
			b, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", b)
			out, code = w.sim("settings", "set", "ssh.agentForwardingEnabled", "false")
			require.Zero(t, code, out)
			return w.deployer(name, w.environ())
		}},
		{"network", func(w *simWorld, name string) *Deployer {
			// The session asked for a locked network; the host's preset is allow-all
			// (the tests' simulator's).
			d := w.deployer(name, w.environ())
			d.Settings.Network = "locked"
			return d
		}},
		{"port binds", func(w *simWorld, name string) *Deployer {
			out, code := w.sim("ports", name, "--publish", "0.0.0.0:"+strconv.Itoa(freePort(t))+":80")
			require.Zero(t, code, out)
			return w.deployer(name, w.environ())
		}},
	}
	for _, tt := range tests {
		name := tt.check
		if name == "" {
			name = "healthy"
		}
		t.Run(name, func(t *testing.T) {
			w := newSimWorld(t)
			sandbox := "deploy-verify"
			w.create(sandbox)
			d := tt.breakIt(w, sandbox)
			r, err := d.Verify(context.Background())
			require.NoError(t, err)
			require.Len(t, r.Checks, len(CheckNames))
			var names []string
			for _, c := range r.Checks {
				names = append(names, c.Name)
				assert.NotEmpty(t, c.Evidence, c.Name)
			}
			assert.Equal(t, CheckNames, names)
			if tt.check == "" {
				assert.True(t, r.Passed(), r.String())
				// sbx forwards the SSH agent by default: said, not failed.
				assert.Contains(t, r.Checks[8].Warning, "sbx settings set ssh.agentForwardingEnabled false", r.String())
				// and the allow-all preset is said too.
				assert.Contains(t, r.Checks[10].Warning, "preset allow-all", r.String())
				return
			}
			assert.Equal(t, []string{tt.check}, r.Failed(), r.String())
		})
	}
}

// TestVerifyContainersCheckCanFail: the containers check passes with an ordinary
// container running and fails, with the container and the reason as evidence, for each
// way a running container can hold more than the docker tools grant — whoever started it.
func TestVerifyContainersCheckCanFail(t *testing.T) {
	w := newSimWorld(t)
	const sandbox = "deploy-verify-containers"
	w.createRO(sandbox)
	d := w.deployer(sandbox, w.environ())
	d.ReadOnly = true
	run := func(args ...string) {
		out, code := w.sim(append([]string{"exec", sandbox, "--", "docker", "run", "--detach", "--name=bad"}, append(args, "busybox:latest", "sleep", "300")...)...)
		require.Zero(t, code, out)
	}
	out, code := w.sim("exec", sandbox, "--", "docker", "run", "--detach", "--name=ordinary", "-v", w.ws+":/w:ro", "busybox:latest", "sleep", "300")
	require.Zero(t, code, out)
	c := d.checkContainers(context.Background(), sandbox)
	assert.True(t, c.OK, c.Evidence)
	assert.Contains(t, c.Evidence, "1 running (ordinary)")

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"socket", []string{"-v", "/var/run/docker.sock:/s"}, "mounts /var/run/docker.sock at /s: the daemon's socket"},
		{"socket dir", []string{"-v", "/run:/r"}, "mounts /run at /r: the daemon's socket"},
		{"socket volume", []string{"--mount", "type=volume,src=sockvol,dst=/v,volume-driver=local,volume-opt=type=none,volume-opt=o=bind,volume-opt=device=/var/run"}, "the daemon's socket"},
		{"workspace rw", []string{"-v", w.ws + ":/w"}, "mounts the read-only workspace writable"},
		{"cap_add", []string{"--cap-add=SYS_ADMIN"}, "cap_add CAP_SYS_ADMIN"},
		{"seccomp", []string{"--security-opt=seccomp=unconfined"}, "security_opt seccomp=unconfined"},
		{"device", []string{"--device=/dev/null:/dev/x"}, "1 device(s)"},
		{"pid host", []string{"--pid=host"}, "pid namespace of the sandbox"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run(tt.args...)
			defer w.sim("exec", sandbox, "--", "sh", "-c", "docker rm -f bad; docker volume rm sockvol 2>/dev/null; true")
			c := d.checkContainers(context.Background(), sandbox)
			assert.False(t, c.OK, c.Evidence)
			assert.Contains(t, c.Evidence, "bad: ")
			assert.Contains(t, c.Evidence, tt.want)
			assert.NotContains(t, c.Evidence, "ordinary")
		})
	}
}
