package sbx

import (
	"regexp"
	"strings"
)

// hostBasics are the variables the sbx CLI itself needs; by default nothing else of the
// host environment reaches it. XDG_STATE_HOME is where this program keeps its state
// (owner records, review stores, audit logs): a serve the pi package starts must find
// the same directory as the user's own commands.
var hostBasics = []string{"HOME", "PATH", "USER", "LOGNAME", "TMPDIR", "SHELL", "LANG", "TERM", "XDG_STATE_HOME"}

// hostOnly describe the host itself; with passthrough they stay on the host because the
// VM has its own.
var hostOnly = []string{"HOME", "PATH", "USER", "LOGNAME", "SHELL", "TMPDIR", "PWD", "XDG_STATE_HOME"}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// EnvPolicy decides which host variables reach the sbx CLI and which are forwarded into
// the VM. The settings make it, once.
type EnvPolicy struct {
	// Allow are extra variable names (DOCKER_SANDBOX_ENV_ALLOWLIST).
	Allow []string
	// Passthrough keeps every variable except docker/compose ones
	// (DOCKER_SANDBOX_ENV_PASSTHROUGH=1).
	Passthrough bool
}

// Forwardable reports whether name may be allowlisted: a valid variable name that is not
// a docker/compose one.
func Forwardable(name string) bool { return envName.MatchString(name) && !isDockerVar(name) }

// isDockerVar reports the variables that must never reach a child: they point clients at
// a Docker daemon (DOCKER_HOST, DOCKER_CONTEXT, …) or configure compose.
func isDockerVar(name string) bool {
	return strings.HasPrefix(name, "DOCKER_") || strings.HasPrefix(name, "COMPOSE_")
}

// HostEnv returns the environment for a host child process (the sbx CLI): every
// DOCKER_*/COMPOSE_* variable removed, and unless Passthrough only the basics and the
// allowlisted names kept.
func (p EnvPolicy) HostEnv(environ []string) []string {
	out := make([]string, 0, len(hostBasics)+len(p.Allow))
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || isDockerVar(k) {
			continue
		}
		if p.Passthrough || contains(hostBasics, k) || contains(p.Allow, k) {
			out = append(out, kv)
		}
	}
	return out
}

// VMEnv returns the KEY=VALUE pairs to forward into the VM as `-e` flags: pi's PI_*
// variables (not the backend's own PI_SBX_* settings, which describe the host) and the
// allowlisted names; with Passthrough every variable except docker, compose and
// host-describing ones.
func (p EnvPolicy) VMEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || !envName.MatchString(k) || isDockerVar(k) {
			continue
		}
		switch {
		case contains(p.Allow, k):
			out = append(out, kv)
		case strings.HasPrefix(k, "PI_SBX_"):
			// the backend's own host settings (PI_SBX_BIN, …): host paths, not pi's session
		case strings.HasPrefix(k, "PI_"):
			out = append(out, kv)
		case p.Passthrough && !contains(hostOnly, k):
			out = append(out, kv)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
