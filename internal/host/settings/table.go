package settings

import (
	"strings"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/lifecycle"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// Var is one variable the host side reads: its row in docs/settings.md and how it is
// parsed. Adding a setting is adding a row here (and its field in Settings).
type Var struct {
	Name    string
	Type    string // bool, enum (its values), hours, path, names, string, …
	Default string
	Meaning string
	trim    bool                          // surrounding blanks are ignored
	set     func(*Settings, string) error // the value is never ""
}

// Vars returns the variables, in the order docs/settings.md lists them.
func Vars() []Var { return append([]Var(nil), table...) }

// removed are variables no longer read: set, they are refused with what to use instead, so
// that nobody silently gets what they asked not to.
var removed = []struct{ name, instead string }{
	{"PI_SBX_DOCKER_TOOLS", "use PI_SBX_MODE=tools (pi's seven), deploy (the docker_* tools) or both"},
}

func boolVar(name string, field func(*Settings) *bool) func(*Settings, string) error {
	return func(s *Settings, v string) error {
		b, err := parseBool(name, v)
		*field(s) = b
		return err
	}
}

func stringVar(field func(*Settings) *string) func(*Settings, string) error {
	return func(s *Settings, v string) error { *field(s) = v; return nil }
}

func enumVar(name string, field func(*Settings) *string, values ...string) func(*Settings, string) error {
	return func(s *Settings, v string) error {
		v = strings.ToLower(v)
		for _, ok := range values {
			if v == ok {
				*field(s) = v
				return nil
			}
		}
		return errorf("%s=%q: want %s", name, v, orList(values))
	}
}

// durationVar reads a positive Go duration (90s, 20m, 1h).
func durationVar(name string, field func(*Settings) *time.Duration) func(*Settings, string) error {
	return func(s *Settings, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return errorf("%s=%q: want a positive duration such as 90s, 20m or 1h", name, v)
		}
		*field(s) = d
		return nil
	}
}

// orList spells values as "a, b or c".
func orList(values []string) string {
	if len(values) == 1 {
		return values[0]
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

var table = []Var{
	{Name: "DOCKER_SANDBOX", Type: "sandbox name", Default: "a new pi-sbx-<pid>-<random>",
		Meaning: "use this sandbox (created if missing); never removed",
		set:     stringVar(func(s *Settings) *string { return &s.Sandbox })},
	{Name: "DOCKER_SANDBOX_REUSE", Type: "bool", Default: "0",
		Meaning: "without DOCKER_SANDBOX: the project's sandbox pi-sbx-<basename>-<hash>, kept between sessions",
		trim:    true, set: boolVar("DOCKER_SANDBOX_REUSE", func(s *Settings) *bool { return &s.Reuse })},
	{Name: "DOCKER_SANDBOX_TEARDOWN", Type: "remove, stop or none", Default: "remove (none when pinned)",
		Meaning: "a session sandbox's fate at exit",
		set: func(s *Settings, v string) error {
			switch v {
			case lifecycle.TeardownRemove, lifecycle.TeardownStop, lifecycle.TeardownNone:
				s.Teardown = v
				return nil
			}
			return errorf("DOCKER_SANDBOX_TEARDOWN=%q: want remove, stop or none", v)
		}},
	{Name: "DOCKER_SANDBOX_TEARDOWN_FORCE", Type: "bool", Default: "0",
		Meaning: "teardown removes a review sandbox even with unlanded work (fetched to the host first)",
		trim:    true, set: boolVar("DOCKER_SANDBOX_TEARDOWN_FORCE", func(s *Settings) *bool { return &s.TeardownForce })},
	{Name: "DOCKER_SANDBOX_WORKSPACE_MODE", Type: "rw, ro or review", Default: "rw",
		Meaning: "the workspace read/write, read-only (scratch primary ~/.sbx-prime-NAME), or the sandbox's own copy until landed (git: sbx create --clone; other: a copy-on-write layer)",
		trim:    true, set: func(*Settings, string) error { return nil }}, // with its alias, in validate
	{Name: "DOCKER_SANDBOX_WORKSPACE_RO", Type: "bool", Default: "0",
		Meaning: "the same as DOCKER_SANDBOX_WORKSPACE_MODE=ro (the older spelling; the two must agree)",
		trim:    true, set: func(*Settings, string) error { return nil }},
	{Name: "DOCKER_SANDBOX_CPUS", Type: "whole number >= 0", Default: "sbx's",
		Meaning: "sbx create --cpus (0 = all host CPUs)",
		trim:    true, set: stringVar(func(s *Settings) *string { return &s.Resources.CPUs })},
	{Name: "DOCKER_SANDBOX_MEMORY", Type: "size (512m, 4g, 2GiB)", Default: "sbx's",
		Meaning: "sbx create --memory (at least 512 MiB)",
		trim:    true, set: stringVar(func(s *Settings) *string { return &s.Resources.Memory })},
	{Name: "DOCKER_SANDBOX_TEMPLATE", Type: "image reference", Default: "the agent's image",
		Meaning: "sbx create --template",
		trim:    true, set: stringVar(func(s *Settings) *string { return &s.Resources.Template })},
	{Name: "DOCKER_SANDBOX_ENV_ALLOWLIST", Type: "names (A,B)", Default: "none",
		Meaning: "host variables kept for sbx and forwarded into the VM (docker/compose ones never are)",
		set: func(s *Settings, v string) error {
			for _, n := range strings.Split(v, ",") {
				if n = strings.TrimSpace(n); sbx.Forwardable(n) {
					s.Policy.Allow = append(s.Policy.Allow, n)
				}
			}
			return nil
		}},
	{Name: "DOCKER_SANDBOX_ENV_PASSTHROUGH", Type: "bool", Default: "0",
		Meaning: "keep every variable but DOCKER_*/COMPOSE_* (host-describing ones stay out of the VM)",
		trim:    true, set: boolVar("DOCKER_SANDBOX_ENV_PASSTHROUGH", func(s *Settings) *bool { return &s.Policy.Passthrough })},
	{Name: "DOCKER_SANDBOX_GC_HOURS", Type: "hours", Default: "24",
		Meaning: "at session start, remove stale pi-sbx-* sandboxes older than this (0 = no sweep)",
		trim:    true, set: func(s *Settings, v string) (err error) { s.GCHours, err = parseGCHours(v); return err }},
	{Name: "PI_SBX_BIN", Type: "path or name", Default: "sbx on PATH, then the usual install places",
		Meaning: "the sbx program",
		set:     stringVar(func(s *Settings) *string { return &s.SbxBin })},
	{Name: "PI_SBX_MODE", Type: "tools, deploy or both", Default: "both",
		Meaning: "the tools serve lists: pi's seven, the docker_* tools, or both (the pi package starts serve with tools unless set)",
		trim:    true, set: enumVar("PI_SBX_MODE", func(s *Settings) *string { return &s.ToolMode }, ToolsOnly, DeployOnly, ToolsAndDeploy)},
	{Name: "PI_SBX_TOOLS", Type: "+terminal", Default: "none",
		Meaning: "offer the terminal tools too (serve --tools wins)",
		set:     func(s *Settings, v string) (err error) { s.Terminal, err = ParseTools("PI_SBX_TOOLS", v); return err }},
	{Name: "PI_SBX_DETAILS", Type: "none or structured", Default: "none",
		Meaning: "whether results carry pi's details as structuredContent (serve --details wins)",
		set: func(s *Settings, v string) (err error) {
			s.Details, err = ParseDetails("PI_SBX_DETAILS", v)
			return err
		}},
	{Name: "PI_SBX_NETWORK", Type: "locked, balanced or open", Default: "the host's sbx policy",
		Meaning: "the network stance of a sandbox the session creates: locked denies every host for it; balanced and open hold only where sbx's host preset is that already",
		trim:    true, set: enumVar("PI_SBX_NETWORK", func(s *Settings) *string { return &s.Network }, "locked", "balanced", "open")},
	{Name: "PI_SBX_CLOUD", Type: "bool", Default: "0",
		Meaning: "the session's sandbox in Docker's cloud (sbx --cloud, sbx 0.45 or newer): review mode, the workspace shipped in at its path (docs/cloud.md); serve --cloud and shell --cloud set it",
		trim:    true, set: boolVar("PI_SBX_CLOUD", func(s *Settings) *bool { return &s.Cloud })},
	{Name: "PI_SBX_CLOUD_SIZE", Type: orList(sbx.CloudSizes), Default: "sbx's (2 CPUs, 4 GiB)",
		Meaning: "a cloud sandbox's size: micro 1 CPU/2 GB … xl 16 CPUs/32 GB (with PI_SBX_CLOUD)",
		trim:    true, set: enumVar("PI_SBX_CLOUD_SIZE", func(s *Settings) *string { return &s.CloudSize }, sbx.CloudSizes...)},
	{Name: "PI_SBX_CLOUD_EXTEND", Type: "duration", Default: "20m",
		Meaning: "while a cloud session is open, how often its sandbox's time to live is extended, by as much (whole minutes, at least 1m; never past sbx's 24 h from creation)",
		trim:    true, set: durationVar("PI_SBX_CLOUD_EXTEND", func(s *Settings) *time.Duration { return &s.CloudExtend })},
	{Name: "PI_SBX_CLOUD_SHIP", Type: "paths (a,b/c)", Default: "none",
		Meaning: "workspace-relative files or directories shipped to a cloud sandbox although .gitignore or the default list leaves them out (within the bound; .git never; not brought back as work; with PI_SBX_CLOUD; docs/cloud.md)",
		set:     func(s *Settings, v string) (err error) { s.CloudShip, err = ParseShip(v); return err }},
	{Name: "HOME", Type: "path", Default: "",
		Meaning: "the read-only mode's scratch primary and the state directory live under it",
		set:     stringVar(func(s *Settings) *string { return &s.Home })},
	{Name: "XDG_STATE_HOME", Type: "path", Default: "~/.local/state",
		Meaning: "owner records (for GC) and review mode's kept work live in $XDG_STATE_HOME/pi-sbx-backend",
		set:     func(*Settings, string) error { return nil }}, // with HOME, in validate
	{Name: "PATH", Type: "path list", Default: "",
		Meaning: "where sbx is looked up (without PI_SBX_BIN)",
		set:     stringVar(func(s *Settings) *string { return &s.Path })},
	{Name: "DOCKER_HOST", Type: "URL", Default: "",
		Meaning: "read only by the docker_verify audit, which checks the host daemon's socket is not in the sandbox; never forwarded",
		set:     stringVar(func(s *Settings) *string { return &s.DockerHost })},
	{Name: "XDG_RUNTIME_DIR", Type: "path", Default: "",
		Meaning: "read only by the docker_verify audit (rootless docker's socket); never forwarded",
		set:     stringVar(func(s *Settings) *string { return &s.RuntimeDir })},
}
