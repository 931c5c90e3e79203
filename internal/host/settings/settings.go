// Package settings is the one place the host side reads its own configuration: the
// DOCKER_SANDBOX_* and PI_SBX_* variables (and the few host facts it needs, such as HOME),
// parsed once from the environment into a typed, validated Settings that the commands
// pass down to the constructors. Every variable is one row of table; docs/settings.md is
// generated from it.
//
// The host environment itself is kept apart (Settings.Environ): it is what the env
// policy forwards into the sandbox and hands to children, never read for settings again.
package settings

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/lifecycle"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// Tool modes (PI_SBX_MODE): the tool sets serve lists.
const (
	ToolsAndDeploy = "both"   // pi's seven and the docker_* tools (the default)
	ToolsOnly      = "tools"  // pi's seven
	DeployOnly     = "deploy" // the docker_* tools
)

// Details modes (PI_SBX_DETAILS, serve --details): whether results carry pi's details as
// structuredContent.
const (
	DetailsNone       = "none"       // content, _meta and isError only (the default)
	DetailsStructured = "structured" // pi's details too: what the pi package reads
)

// Settings are the host side's settings, read once (Parse).
type Settings struct {
	// Sandbox pins the session's sandbox by name (DOCKER_SANDBOX); "" makes one per session.
	Sandbox string
	// Reuse pins the project's sandbox when Sandbox is unset (DOCKER_SANDBOX_REUSE).
	Reuse bool
	// Teardown is a created sandbox's fate at exit (lifecycle.TeardownRemove, …); "" is the
	// default: remove, none when pinned.
	Teardown string
	// TeardownForce removes a review sandbox even with unlanded work.
	TeardownForce bool
	// Mode is the workspace mode (lifecycle.ModeRW, lifecycle.ModeRO, lifecycle.ModeReview).
	Mode string
	// Resources are sbx create's --cpus, --memory and --template.
	Resources sbx.Resources
	// Policy says which host variables reach sbx and the VM.
	Policy sbx.EnvPolicy
	// GCHours is the age in hours of the stale sandboxes a session sweeps at start (0: no sweep).
	GCHours float64
	// SbxBin is the sbx program (PI_SBX_BIN): a path, or a name looked up like "sbx"; "" = sbx.
	SbxBin string
	// ToolMode is which tool sets serve lists (ToolsAndDeploy, ToolsOnly, DeployOnly).
	ToolMode string
	// Terminal offers the terminal tools too (PI_SBX_TOOLS=+terminal).
	Terminal bool
	// Details is the details mode (DetailsNone, DetailsStructured); "" = DetailsNone.
	Details string
	// Network is the network stance a created sandbox gets (PI_SBX_NETWORK: locked,
	// balanced or open); "" keeps the host's policy.
	Network string
	// Cloud puts the session's sandbox in Docker's cloud (PI_SBX_CLOUD): the workspace
	// mode is then review, and the name has no periods.
	Cloud bool
	// CloudSize is a cloud sandbox's size (PI_SBX_CLOUD_SIZE); "" is sbx's default.
	CloudSize string
	// CloudExtend is how often a cloud session extends its sandbox's time to live
	// (PI_SBX_CLOUD_EXTEND); 0 is lifecycle.DefaultTTLEvery.
	CloudExtend time.Duration
	// CloudShip are workspace-relative paths shipped to a cloud sandbox although ignored
	// or left out by default (PI_SBX_CLOUD_SHIP): clean, relative, never .git.
	CloudShip []string
	// Home is the host user's home directory (HOME).
	Home string
	// StateHome is XDG_STATE_HOME when absolute, else HOME/.local/state, else "".
	StateHome string
	// Path is the host's PATH, where sbx is looked up.
	Path string
	// DockerHost and RuntimeDir are the host's DOCKER_HOST and XDG_RUNTIME_DIR: the
	// isolation audit checks no host Docker socket they point at is in the sandbox.
	DockerHost, RuntimeDir string

	// Environ is the host environment as it was: what the env policy forwards into the
	// sandbox and keeps for children. Settings are never read from it again.
	Environ []string
}

// Pinned reports whether the session's sandbox is the user's (DOCKER_SANDBOX).
func (s Settings) Pinned() bool { return s.Sandbox != "" }

// ForProject returns s pinned to the workspace's project sandbox when DOCKER_SANDBOX_REUSE
// asks for it and DOCKER_SANDBOX does not name one; reused says it did.
func (s Settings) ForProject(workspace string) (_ Settings, reused bool) {
	if !s.Reuse || s.Sandbox != "" {
		return s, false
	}
	s.Sandbox = lifecycle.ProjectName(workspace)
	if s.Cloud {
		s.Sandbox = sbx.CloudName(s.Sandbox)
	}
	return s, true
}

// Error is a setting with a value the program cannot use: one line naming the variable
// and the value.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func errorf(format string, args ...any) error { return &Error{fmt.Sprintf(format, args...)} }

// Parse reads the settings from environ (KEY=VALUE; a later value of a name wins, an
// empty one is unset) and validates them. The first problem is returned as an *Error.
func Parse(environ []string) (Settings, error) {
	s := Settings{GCHours: 24, ToolMode: ToolsAndDeploy, Environ: environ}
	vals := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vals[k] = v
		}
	}
	for _, r := range removed {
		if v := vals[r.name]; v != "" {
			return Settings{}, errorf("%s=%q is no longer read: %s", r.name, v, r.instead)
		}
	}
	for _, v := range table {
		raw := vals[v.Name]
		if v.trim {
			raw = strings.TrimSpace(raw)
		}
		if raw == "" {
			continue
		}
		if err := v.set(&s, raw); err != nil {
			return Settings{}, err
		}
	}
	return s, s.validate(vals)
}

// validate checks what no one variable can: the workspace mode's two spellings agree, a
// pinned name is one sbx takes, the create options are sbx's.
func (s *Settings) validate(vals map[string]string) error {
	mode := strings.ToLower(strings.TrimSpace(vals["DOCKER_SANDBOX_WORKSPACE_MODE"]))
	ro := strings.ToLower(strings.TrimSpace(vals["DOCKER_SANDBOX_WORKSPACE_RO"]))
	switch mode {
	case "", lifecycle.ModeRW, lifecycle.ModeRO, lifecycle.ModeReview:
	default:
		return errorf("DOCKER_SANDBOX_WORKSPACE_MODE=%q: want rw, ro or review", mode)
	}
	alias := "" // what DOCKER_SANDBOX_WORKSPACE_RO asks for
	switch ro {
	case "":
	case "1", "true", "ro", "yes", "on":
		alias = lifecycle.ModeRO
	case "0", "false", "no", "off", "rw":
		alias = lifecycle.ModeRW
	default:
		return errorf("DOCKER_SANDBOX_WORKSPACE_RO=%q: want 1 or 0 (or use DOCKER_SANDBOX_WORKSPACE_MODE=rw|ro|review)", ro)
	}
	switch {
	case mode != "" && alias != "" && alias != mode:
		return errorf("DOCKER_SANDBOX_WORKSPACE_MODE=%s and DOCKER_SANDBOX_WORKSPACE_RO=%s disagree: set only DOCKER_SANDBOX_WORKSPACE_MODE", mode, ro)
	case mode != "":
		s.Mode = mode
	case alias != "":
		s.Mode = alias
	default:
		s.Mode = lifecycle.ModeRW
	}
	if s.Sandbox != "" {
		if err := sbx.ValidateName(s.Sandbox); err != nil {
			return errorf("DOCKER_SANDBOX: %v", err)
		}
	}
	if err := s.validateCloud(mode, alias); err != nil {
		return err
	}
	if err := s.Resources.Validate(); err != nil {
		return &Error{err.Error()}
	}
	switch {
	case filepath.IsAbs(vals["XDG_STATE_HOME"]):
		s.StateHome = vals["XDG_STATE_HOME"]
	case filepath.IsAbs(s.Home):
		s.StateHome = filepath.Join(s.Home, ".local", "state")
	}
	return nil
}

// validateCloud checks the cloud's settings against the rest: a cloud sandbox mounts
// nothing, so the workspace mode is review (rw or ro asked for explicitly is refused,
// not silently changed); its size is PI_SBX_CLOUD_SIZE, not --cpus/--memory; its name
// has no periods.
func (s *Settings) validateCloud(mode, alias string) error {
	if !s.Cloud {
		if s.CloudSize != "" {
			return errorf("PI_SBX_CLOUD_SIZE=%s without PI_SBX_CLOUD=1: set both, or neither", s.CloudSize)
		}
		if s.CloudExtend != 0 {
			return errorf("PI_SBX_CLOUD_EXTEND=%s without PI_SBX_CLOUD=1: set both, or neither", s.CloudExtend)
		}
		if len(s.CloudShip) > 0 {
			return errorf("PI_SBX_CLOUD_SHIP=%s without PI_SBX_CLOUD=1: set both, or neither", strings.Join(s.CloudShip, ","))
		}
		return nil
	}
	asked := mode
	if asked == "" {
		asked = alias
	}
	if asked != "" && asked != lifecycle.ModeReview {
		return errorf("PI_SBX_CLOUD=1 works in review mode only (a cloud sandbox mounts nothing of the host), not DOCKER_SANDBOX_WORKSPACE_MODE=%s", asked)
	}
	s.Mode = lifecycle.ModeReview
	if s.Resources.CPUs != "" || s.Resources.Memory != "" {
		return errorf("PI_SBX_CLOUD=1: a cloud sandbox's size is PI_SBX_CLOUD_SIZE (%s), not DOCKER_SANDBOX_CPUS/MEMORY", orList(sbx.CloudSizes))
	}
	if s.Sandbox != "" {
		if err := sbx.ValidateCloudName(s.Sandbox); err != nil {
			return errorf("DOCKER_SANDBOX with PI_SBX_CLOUD=1: %v", err)
		}
	}
	return nil
}

// ParseShip reads a PI_SBX_CLOUD_SHIP value: comma-separated paths relative to the
// workspace, each cleaned; one that is absolute, leads out of the workspace or names a
// .git directory is refused. Whether each exists is checked against the workspace when
// the session opens.
func ParseShip(v string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		p := filepath.ToSlash(filepath.Clean(f))
		switch {
		case filepath.IsAbs(f), p == "..", strings.HasPrefix(p, "../"):
			return nil, errorf("PI_SBX_CLOUD_SHIP: %q is outside the workspace: give a path relative to it", f)
		case slices.Contains(strings.Split(p, "/"), ".git"):
			return nil, errorf("PI_SBX_CLOUD_SHIP: %q: a .git directory is never shipped", f)
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// ParseTools reads a --tools (or PI_SBX_TOOLS) value: a comma-separated list of +SET; the
// one set there is is terminal. what names the source in the error ("--tools").
func ParseTools(what, v string) (terminal bool, err error) {
	for _, f := range strings.Split(v, ",") {
		switch f = strings.TrimSpace(f); f {
		case "":
		case "+terminal", "terminal":
			terminal = true
		default:
			return false, errorf("%s %q: want +terminal", what, f)
		}
	}
	return terminal, nil
}

// ParseDetails checks a --details (or PI_SBX_DETAILS) value; what names its source.
func ParseDetails(what, v string) (string, error) {
	switch v {
	case "":
		return DetailsNone, nil
	case DetailsNone, DetailsStructured:
		return v, nil
	}
	return "", errorf("%s %q: want %s or %s", what, v, DetailsNone, DetailsStructured)
}

// parseBool is the one way a yes/no setting is read: 1/true/yes/on or 0/false/no/off.
func parseBool(name, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, errorf("%s=%q: want 1 or 0", name, v)
}

// parseGCHours reads DOCKER_SANDBOX_GC_HOURS: hours >= 0, at most a year.
func parseGCHours(v string) (float64, error) {
	h, err := strconv.ParseFloat(v, 64)
	if err != nil || h < 0 || h > 24*365 {
		return 0, errorf("DOCKER_SANDBOX_GC_HOURS=%q: want hours >= 0 (0 = no sweep)", v)
	}
	return h, nil
}

// Client returns a client for the sbx program s names, whose children get the policy's
// host environment.
func (s Settings) Client(r sbx.Runner) *sbx.Client {
	return sbx.NewClient(s.SbxBin, s.Path, s.Policy.HostEnv(s.Environ), r)
}

// VMEnv returns the KEY=VALUE pairs the policy forwards into the VM.
func (s Settings) VMEnv() []string { return s.Policy.VMEnv(s.Environ) }

// Owners returns the owner records' directory (under StateHome).
func (s Settings) Owners() (*lifecycle.Owners, error) { return lifecycle.NewOwners(s.StateHome) }
