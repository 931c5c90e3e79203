//go:build linux

package sbxsim

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ComposeVersion is the docker compose release scripts/setup.sh builds into
// .cache/compose/<version>/docker-compose.
const ComposeVersion = "v2.40.3"

// composePluginEnv names the docker compose CLI plugin bound into new sandboxes.
const composePluginEnv = "SBXSIM_COMPOSE_PLUGIN"

// composePluginPath is where the plugin appears inside a sandbox: the system plugin
// directory every docker CLI searches (Debian's docker.io and Docker's own builds), so
// that `docker compose` works for any user, whatever HOME is.
const composePluginPath = "/usr/libexec/docker/cli-plugins/docker-compose"

// composePlugin finds the docker compose plugin for a new sandbox: $SBXSIM_COMPOSE_PLUGIN
// when set ("none": no plugin), else docker-compose beside the sbxsim executable, else
// the build of scripts/setup.sh for a binary in the repository's bin/
// (../.cache/compose/<version>/docker-compose); "" when there is none — the sandbox then
// has whatever plugin the host's /usr holds. An explicit path must be an executable file.
func (c *cli) composePlugin() (string, error) {
	if v, ok := c.env.LookupEnv(composePluginEnv); ok && v != "" {
		if v == "none" {
			return "", nil
		}
		p, err := executableFile(v)
		if err != nil {
			return "", fmt.Errorf("%s: %w", composePluginEnv, err)
		}
		return p, nil
	}
	if c.env.Self == "" {
		return "", nil
	}
	dir := filepath.Dir(c.env.Self)
	for _, p := range []string{
		filepath.Join(dir, "docker-compose"),
		filepath.Join(dir, "..", ".cache", "compose", ComposeVersion, "docker-compose"),
	} {
		if real, err := executableFile(p); err == nil {
			return real, nil
		}
	}
	return "", nil
}

// executableFile resolves p to an absolute path without symlinks and checks that it is
// a regular file someone may execute.
func executableFile(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, errors.Unwrap(err))
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%s is not an executable file", p)
	}
	return real, nil
}
