package doctor

import "strings"

// VirtiofsCacheVar is sbx's switch for the virtiofs cache of workspaces shared into the
// VM on a Mac (on by default for direct mounts). Docker advises turning it off "if you
// experience Git index corruption or unexpected file content".
const VirtiofsCacheVar = "DOCKER_SANDBOXES_ENABLE_VIRTIOFS_CACHE"

// share reports how the workspace reaches the VM and its cache. On a Mac sbx shares it
// over virtiofs, cached unless VirtiofsCacheVar=0 reaches sbx's daemon: a file saved on
// the host while the agent works can then read stale inside the VM. The agent's own
// read and edit read around the cache; commands (cat, compilers, git) do not, so the
// cache is a WARN with the switch that turns it off. sbx reports neither in `settings`
// nor in `inspect` (as of v0.55), so the switch is read from this process's
// environment: where the user would set it for sbx.
func (d *Doctor) share() Check {
	const n = "workspace share"
	if d.Host.GOOS != "darwin" {
		return Check{Name: n, Status: Pass, Evidence: "the workspace is shared at its host path; sbx's virtiofs cache switch is a macOS one"}
	}
	v, ok := "", false
	if d.Host.Env != nil {
		v, ok = d.Host.Env(VirtiofsCacheVar)
	}
	if ok && (v == "0" || strings.EqualFold(v, "false")) {
		return Check{Name: n, Status: Pass, Evidence: "virtiofs, cache off (" + VirtiofsCacheVar + "=" + v + "; in force once sbx's daemon " +
			"was started with it: pi-sbx-backend passes no DOCKER_* variable to sbx)"}
	}
	return Check{n, Warn, "virtiofs with its cache on (sbx's default): if you edit files on the host while the agent works, " +
		"commands in the sandbox (cat, compilers, git) may read them stale for the cache's timeout; the agent's read and edit " +
		"read around it. Turn it off with " + VirtiofsCacheVar + "=0 in the environment sbx's daemon starts from " +
		"(the restart stops running sandboxes)",
		VirtiofsCacheVar + "=0 sbx daemon restart"}
}
