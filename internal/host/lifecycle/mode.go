package lifecycle

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
