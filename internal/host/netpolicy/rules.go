package netpolicy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/lifecycle"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/statefile"
)

// Scope is where an allow or deny rule holds.
type Scope string

// The scopes: every sandbox (sbx's global rules), this session's sandbox (sbx's
// per-sandbox rules), or every sandbox this project's sessions create (remembered in the
// user's state directory, never the workspace, which the sandbox can write, and applied
// as per-sandbox rules at create).
const (
	Global  Scope = "global"
	Session Scope = "session"
	Project Scope = "project"
)

// Policy is what Rules needs of sbx (sbx.Client).
type Policy interface {
	PolicyLs(ctx context.Context, sandbox string) (sbx.Policy, error)
	PolicyRule(ctx context.Context, action, sandbox string, hosts []string) error
}

// Rules adds allow and deny rules at a scope.
type Rules struct {
	Sbx Policy
	// StateDir holds the project rules (the user's state directory, e.g.
	// ~/.local/state/pi-sbx-backend/network); "" refuses Project.
	StateDir string
}

// StateDir is where project rules live: beside the owner records, in the user's state
// directory stateHome (settings.StateHome).
func StateDir(stateHome string) (string, error) {
	o, err := lifecycle.NewOwners(stateHome)
	if err != nil {
		return "", fmt.Errorf("project network rules: %w", err)
	}
	return filepath.Join(filepath.Dir(o.Dir), "network"), nil
}

// Change adds action ("allow" or "deny") rules for hosts at scope. sandbox is the
// session's sandbox (needed for Session; for Project, when set, the rules apply to it
// at once too), workspace the project (Project). It returns what was done, in a line.
func (r *Rules) Change(ctx context.Context, action string, hosts []string, scope Scope, sandbox, workspace string) (string, error) {
	if action != "allow" && action != "deny" {
		return "", fmt.Errorf("%q: want allow or deny", action)
	}
	if len(hosts) == 0 {
		return "", errors.New("no host given")
	}
	for _, h := range hosts {
		if err := sbx.ValidHostPattern(h); err != nil {
			return "", err
		}
	}
	list := strings.Join(hosts, ", ")
	switch scope {
	case Global, "":
		if err := r.Sbx.PolicyRule(ctx, action, "", hosts); err != nil {
			return "", err
		}
		return fmt.Sprintf("%sed for every sandbox: %s", verb(action), list), nil
	case Session:
		if sandbox == "" {
			return "", errors.New("--session needs the session's sandbox (DOCKER_SANDBOX, or run it from pi with /sandbox allow)")
		}
		if err := r.sandboxRule(ctx, action, sandbox, hosts); err != nil {
			return "", err
		}
		return fmt.Sprintf("%sed for sandbox %s: %s", verb(action), sandbox, list), nil
	case Project:
		if err := r.remember(action, workspace, hosts); err != nil {
			return "", err
		}
		msg := fmt.Sprintf("%sed for this project's sandboxes (%s): %s", verb(action), workspace, list)
		if sandbox != "" {
			if err := r.sandboxRule(ctx, action, sandbox, hosts); err != nil {
				return "", fmt.Errorf("remembered for the project's next sandboxes, but not applied to %s: %w", sandbox, err)
			}
			msg += "; applied to " + sandbox + " now"
		}
		return msg, nil
	}
	return "", fmt.Errorf("scope %q: want global, session or project", scope)
}

func verb(action string) string {
	if action == "allow" {
		return "allow"
	}
	return "deni" // "denied"
}

// sandboxRule adds a per-sandbox rule. sbx only narrows a deny-all host policy per
// sandbox: an allow under another preset is refused here, saying what would work,
// before sbx refuses it less clearly.
func (r *Rules) sandboxRule(ctx context.Context, action, sandbox string, hosts []string) error {
	if action == "allow" {
		p, err := r.Sbx.PolicyLs(ctx, "")
		if err != nil {
			return err
		}
		if p.Preset != sbx.PresetDenyAll {
			return fmt.Errorf("sbx scopes an allow rule to one sandbox only under the deny-all preset (this host's is %q): "+
				"allow it for every sandbox (pi-sbx-backend allow %s), or run `sbx policy init deny-all` first",
				p.Word(), strings.Join(hosts, " "))
		}
	}
	return r.Sbx.PolicyRule(ctx, action, sandbox, hosts)
}

// projectRules is a project's file in StateDir.
type projectRules struct {
	Workspace string   `json:"workspace"`
	Allow     []string `json:"allow,omitempty"`
	Deny      []string `json:"deny,omitempty"`
}

func (r *Rules) path(workspace string) (string, error) {
	if r.StateDir == "" {
		return "", errors.New("no state directory for project rules (HOME unset?)")
	}
	if !filepath.IsAbs(workspace) {
		return "", fmt.Errorf("project %q: not an absolute path", workspace)
	}
	sum := sha256.Sum256([]byte(filepath.Clean(workspace)))
	return filepath.Join(r.StateDir, hex.EncodeToString(sum[:8])+".json"), nil
}

func (r *Rules) load(workspace string) (projectRules, error) {
	p, err := r.path(workspace)
	if err != nil {
		return projectRules{}, err
	}
	pr := projectRules{Workspace: filepath.Clean(workspace)}
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return pr, nil
	}
	if err != nil {
		return pr, fmt.Errorf("reading project rules: %w", err)
	}
	if err := json.Unmarshal(data, &pr); err != nil {
		return pr, fmt.Errorf("reading project rules %s: %w", p, err)
	}
	for _, h := range append(slices.Clone(pr.Allow), pr.Deny...) {
		if err := sbx.ValidHostPattern(h); err != nil {
			return pr, fmt.Errorf("project rules %s: %w", p, err)
		}
	}
	return pr, nil
}

func (r *Rules) remember(action, workspace string, hosts []string) error {
	pr, err := r.load(workspace)
	if err != nil {
		return err
	}
	list := &pr.Allow
	if action == "deny" {
		list = &pr.Deny
	}
	for _, h := range hosts {
		if !slices.Contains(*list, h) {
			*list = append(*list, h)
		}
	}
	p, _ := r.path(workspace)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("saving project rules: %w", err)
	}
	if err := statefile.WriteJSON(p, pr); err != nil {
		return fmt.Errorf("saving project rules: %w", err)
	}
	return nil
}

// Stances of PI_SBX_NETWORK.
const (
	StanceLocked   = "locked"
	StanceBalanced = "balanced"
	StanceOpen     = "open"
)

// AtCreate applies, to a sandbox just created for workspace, the session's stance
// (PI_SBX_NETWORK: "" keeps the host's policy) and the project's remembered rules. sbx
// has no per-sandbox preset: locked is a per-sandbox deny of every host (`**`) unless
// the host is deny-all already; balanced and open hold only where the host preset is
// that already (sbx cannot widen one sandbox), else an error says what to run.
func (r *Rules) AtCreate(ctx context.Context, sandbox, workspace, stance string) error {
	pr, err := r.load(workspace)
	if err != nil && r.StateDir != "" {
		return err
	}
	if stance == "" && len(pr.Allow) == 0 && len(pr.Deny) == 0 {
		return nil
	}
	p, err := r.Sbx.PolicyLs(ctx, "")
	if errors.Is(err, sbx.ErrNoPolicy) {
		if stance != "" || len(pr.Allow)+len(pr.Deny) > 0 {
			return fmt.Errorf("PI_SBX_NETWORK and project network rules: %w", err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	switch stance {
	case "":
	case StanceLocked:
		if p.Preset != sbx.PresetDenyAll {
			if err := r.Sbx.PolicyRule(ctx, "deny", sandbox, []string{"**"}); err != nil {
				return fmt.Errorf("PI_SBX_NETWORK=locked: %w", err)
			}
		}
	case StanceBalanced, StanceOpen:
		want := map[string]string{StanceBalanced: sbx.PresetBalanced, StanceOpen: sbx.PresetAllowAll}[stance]
		if p.Preset != want {
			return fmt.Errorf("PI_SBX_NETWORK=%s: sbx has no per-sandbox preset and this host's is %q; "+
				"run `sbx policy init %s` for every sandbox, or use PI_SBX_NETWORK=locked", stance, p.Word(), want)
		}
	default:
		return fmt.Errorf("PI_SBX_NETWORK=%q: want locked, balanced or open", stance)
	}
	if len(pr.Deny) > 0 {
		if err := r.Sbx.PolicyRule(ctx, "deny", sandbox, pr.Deny); err != nil {
			return fmt.Errorf("applying the project's deny rules: %w", err)
		}
	}
	if len(pr.Allow) > 0 {
		if p.Preset != sbx.PresetDenyAll {
			// sbx would refuse them; the host policy decides these hosts instead.
			return nil
		}
		if err := r.Sbx.PolicyRule(ctx, "allow", sandbox, pr.Allow); err != nil {
			return fmt.Errorf("applying the project's allow rules: %w", err)
		}
	}
	return nil
}
