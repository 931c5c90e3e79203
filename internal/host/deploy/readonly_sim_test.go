//go:build e2e

package deploy

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listTree lists every path under dir.
func listTree(t *testing.T, dir string) []string {
	var out []string
	require.NoError(t, filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		out = append(out, p)
		return err
	}))
	sort.Strings(out)
	return out
}

// TestReadOnlyModeHoldsAgainstTheDockerTools: with the workspace mounted read-only, every
// way found to start a container that writes the project — a compose service with
// SYS_ADMIN and no seccomp/AppArmor remounting its :ro bind, privileged, a writable bind,
// a volume binding the workspace through driver_opts, docker_run asking rw and remounting,
// a build mounting the context rw — is refused or fails, and the host's files stay as
// they were. (Before, the compose service with cap_add wrote a file on the host.)
func TestReadOnlyModeHoldsAgainstTheDockerTools(t *testing.T) {
	w := newComposeWorld(t)
	const sandbox = "deploy-ro"
	w.createRO(sandbox)
	d := w.deployer(sandbox, w.environ())
	d.ReadOnly = true
	const write = `mount -o remount,rw /w; mount -o remount,rw,bind /w; echo pwned > /w/pwned; touch /w/pwned2`
	writeFiles(t, w.ws, map[string]string{
		"app/Dockerfile": "FROM busybox:latest\nRUN --mount=type=bind,target=/w,rw sh -c 'echo pwned > /w/pwned' \n",
		"capadd/compose.yaml": "services:\n  s:\n    image: busybox:latest\n    command: [\"sh\", \"-c\", \"" + write + "\"]\n" +
			"    cap_add: [SYS_ADMIN]\n    security_opt: [\"seccomp:unconfined\", \"apparmor:unconfined\"]\n    volumes: [\"..:/w:ro\"]\n",
		"priv/compose.yaml":   "services:\n  s:\n    image: busybox:latest\n    command: [\"sh\", \"-c\", \"" + write + "\"]\n    privileged: true\n    volumes: [\"..:/w:ro\"]\n",
		"rwbind/compose.yaml": "services:\n  s:\n    image: busybox:latest\n    command: [\"sh\", \"-c\", \"" + write + "\"]\n    volumes: [\"..:/w\"]\n",
		"volopts/compose.yaml": "services:\n  s:\n    image: busybox:latest\n    command: [\"sh\", \"-c\", \"" + write + "\"]\n    volumes: [\"ws:/w\"]\n" +
			"volumes:\n  ws:\n    driver_opts: {type: none, o: bind, device: " + w.ws + "}\n",
	})
	before := listTree(t, w.ws)

	for _, p := range []string{"capadd", "priv", "rwbind", "volopts"} {
		out, isErr := callText(t, d, "docker_compose", map[string]any{"file": p + "/compose.yaml"})
		assert.True(t, isErr, "%s: %s", p, out)
	}
	out, _ := callText(t, d, "docker_run", map[string]any{"image": "busybox:latest", "detach": false, "rm": true,
		"volumes": []string{".:/w:rw"}, "command": []string{"sh", "-c", write}})
	assert.Contains(t, out, "Read-only file system")
	out, _ = callText(t, d, "docker_build", map[string]any{"context": "app", "tag": "ro:1"})
	t.Log(out)

	assert.Equal(t, before, listTree(t, w.ws), "nothing was written into the read-only workspace")
	assert.NoFileExists(t, filepath.Join(w.ws, "pwned"))
}
