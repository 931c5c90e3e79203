package deploy

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// Paths are confined where they are used: in the sandbox, as docker there resolves them.
// The host's view can differ (a link to /tmp/x leads to the host's /tmp/x here and to
// the sandbox's there), so the host-side Confine only refuses early what is plainly
// outside; what docker is handed is the real path the sandbox resolved, inside the
// workspace as the sandbox sees it.

// realpathScript prints the real path of each argument in the sandbox, one a line (the
// arguments hold no newline: noControl refused it). -m: a missing tail is joined as is.
const realpathScript = `for p; do realpath -m -- "$p" || exit 3; done`

// confineIn resolves paths in the sandbox and returns their real paths there; one that
// resolves outside the workspace (as the sandbox resolves it) is refused, named by
// what[i] and the path as given — never by where it leads.
func (d *Deployer) confineIn(ctx context.Context, what, paths []string) ([]string, error) {
	for i, p := range paths {
		if !filepath.IsAbs(p) {
			return nil, refuse("%s %q is not a path in the workspace", what[i], p)
		}
		if err := noControl(what[i], p); err != nil {
			return nil, err
		}
	}
	if len(paths) == 0 {
		return nil, nil
	}
	name, err := d.sandbox(ctx)
	if err != nil {
		return nil, err
	}
	argv := append([]string{"sh", "-c", realpathScript, "pi-sbx-realpath", d.Workspace}, paths...)
	o, err := d.execIn(ctx, d.Sbx, name, ShortTimeout, nil, nil, argv...)
	if err != nil {
		return nil, err
	}
	if err := o.err("resolving paths in the sandbox"); err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(o.stdout, "\n"), "\n")
	if len(lines) != len(paths)+1 {
		return nil, fmt.Errorf("resolving paths in the sandbox: %d answers for %d paths", len(lines)-1, len(paths))
	}
	ws := lines[0]
	out := make([]string, len(paths))
	for i, real := range lines[1:] {
		if !filepath.IsAbs(real) || filepath.Clean(real) != real || !within(ws, real) {
			return nil, refuse("%s %q resolves outside the workspace in the sandbox", what[i], d.rel(paths[i]))
		}
		out[i] = real
	}
	return out, nil
}

// rel names a path for a message: relative to the workspace when inside it, so that no
// error tells where the workspace lives on the host.
func (d *Deployer) rel(p string) string {
	if r, err := filepath.Rel(d.Workspace, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// relText rewrites the workspace's host path in docker's messages as workspace-relative.
func (d *Deployer) relText(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, d.Workspace+"/", ""), d.Workspace, ".")
}
