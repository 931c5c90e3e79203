//go:build linux

package sbxsim

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// agents are the agent names sbx accepts for create/run (its built-in agent images).
var agents = []string{"claude", "codex", "copilot", "cursor", "devin", "docker-agent", "droid", "gemini", "kiro", "opencode", "shell"}

// validateName applies sbx's ValidateVMName rules: 2–63 ASCII letters, digits, hyphens
// and periods, starting and ending with a letter or digit; "default" is reserved.
func validateName(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("invalid sandbox name %q: %s", name, why)
	}
	if len(name) < 2 || len(name) > 63 {
		return bad("must be between 2 and 63 characters")
	}
	for _, c := range name {
		if !isAlnum(c) && c != '-' && c != '.' {
			return bad("only letters, numbers, hyphens and periods are allowed")
		}
	}
	if !isAlnum(rune(name[0])) || !isAlnum(rune(name[len(name)-1])) {
		return bad("must start and end with a letter or number")
	}
	if name == "default" {
		return bad("\"default\" is reserved")
	}
	return nil
}

func isAlnum(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// defaultName is sbx's default sandbox name, <agent>-<workdir>, with the workdir's base
// name reduced to characters a name may hold. A mountless sandbox is named after its agent.
func defaultName(agent, primary string) string {
	base := ""
	if primary != "" {
		base = filepath.Base(primary)
	}
	var b strings.Builder
	for _, c := range base {
		if isAlnum(c) || c == '-' || c == '.' {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	name := agent
	if s := strings.Trim(b.String(), "-."); s != "" {
		name += "-" + s
	}
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "-.")
	}
	if len(name) < 2 {
		name += "-sandbox"
	}
	return name
}

// Workspace is a host directory (or file) mounted into the sandbox at the same path.
type Workspace struct {
	Path     string `json:"path"`
	ReadOnly bool   `json:"readOnly,omitempty"`
	// From, in init's configuration only, is the host directory bound at Path when it is
	// not Path itself (clone mode's source and clone).
	From string `json:"from,omitempty"`
}

// String renders the workspace the way it was given on the command line.
func (w Workspace) String() string {
	if w.ReadOnly {
		return w.Path + ":ro"
	}
	return w.Path
}

// errPrimaryRO is sbx's exact message for a read-only primary workspace.
var errPrimaryRO = errors.New("primary workspace must be read/write (remove ':ro' or ':readonly')")

// parseWorkspaces turns create's PATH[:ro] arguments into absolute workspaces. The first
// is the primary and must be writable; every path must exist.
func parseWorkspaces(cwd string, args []string) ([]Workspace, error) {
	var out []Workspace
	for i, a := range args {
		w := Workspace{Path: a}
		for _, suf := range []string{":ro", ":readonly"} {
			if p, ok := strings.CutSuffix(a, suf); ok {
				w = Workspace{Path: p, ReadOnly: true}
			}
		}
		if p, ok := strings.CutSuffix(w.Path, ":rw"); ok && !w.ReadOnly {
			w.Path = p
		}
		if w.ReadOnly && i == 0 {
			return nil, errPrimaryRO
		}
		if w.Path == "" {
			return nil, fmt.Errorf("invalid workspace %q", a)
		}
		if !filepath.IsAbs(w.Path) {
			w.Path = filepath.Join(cwd, w.Path)
		}
		w.Path = filepath.Clean(w.Path)
		fi, err := os.Stat(w.Path)
		if err != nil {
			return nil, fmt.Errorf("workspace %s: %w", w.Path, err)
		}
		if i == 0 && !fi.IsDir() {
			return nil, fmt.Errorf("primary workspace %s is not a directory", w.Path)
		}
		out = append(out, w)
	}
	return out, nil
}
