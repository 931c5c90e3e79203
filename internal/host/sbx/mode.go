package sbx

import (
	"fmt"
	"strings"
)

// Workspace modes (DOCKER_SANDBOX_WORKSPACE_MODE).
const (
	// ModeRW mounts the workspace read/write at its path (the default).
	ModeRW = "rw"
	// ModeRO mounts it read-only, with a scratch primary (DOCKER_SANDBOX_WORKSPACE_RO=1).
	ModeRO = "ro"
	// ModeReview gives the sandbox its own copy at the same path: a git workspace is
	// cloned (`sbx create --clone`), any other is mounted read-only under a copy-on-write
	// layer; nothing reaches the host until the user lands it.
	ModeReview = "review"
)

// WorkspaceMode reads DOCKER_SANDBOX_WORKSPACE_MODE and its older alias
// DOCKER_SANDBOX_WORKSPACE_RO from environ. Both set and disagreeing is an error, as is
// a value neither knows: a mode the user did not get must never be a silent default.
func WorkspaceMode(environ []string) (string, error) {
	var mode, ro string
	var haveMode, haveRO bool
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "DOCKER_SANDBOX_WORKSPACE_MODE":
			mode, haveMode = strings.ToLower(strings.TrimSpace(v)), true
		case "DOCKER_SANDBOX_WORKSPACE_RO":
			ro, haveRO = strings.ToLower(strings.TrimSpace(v)), true
		}
	}
	switch mode {
	case "", ModeRW, ModeRO, ModeReview:
	default:
		return "", fmt.Errorf("DOCKER_SANDBOX_WORKSPACE_MODE=%q: want rw, ro or review", mode)
	}
	var alias string // what DOCKER_SANDBOX_WORKSPACE_RO asks for, "" when unset or empty
	switch ro {
	case "":
	case "1", "true", "ro", "yes":
		alias = ModeRO
	case "0", "false", "no", "rw":
		alias = ModeRW
	default:
		return "", fmt.Errorf("DOCKER_SANDBOX_WORKSPACE_RO=%q: want 1 or 0 (or use DOCKER_SANDBOX_WORKSPACE_MODE=rw|ro|review)", ro)
	}
	switch {
	case haveMode && mode != "" && haveRO && alias != "" && alias != mode:
		return "", fmt.Errorf("DOCKER_SANDBOX_WORKSPACE_MODE=%s and DOCKER_SANDBOX_WORKSPACE_RO=%s disagree: set only DOCKER_SANDBOX_WORKSPACE_MODE", mode, ro)
	case mode != "":
		return mode, nil
	case alias != "":
		return alias, nil
	}
	return ModeRW, nil
}
