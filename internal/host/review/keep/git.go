package keep

import (
	"context"
	"io"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/hostgit"
)

// Git runs the host's git for review mode through hostgit, the one door to git on the
// host (no hooks, configuration, attributes, fsmonitor or GIT_* of the user's), with
// what keep needs on top: objects checked as they arrive, local bundle files allowed
// as the only transport, and an identity of its own for the commits it writes.
type Git struct {
	Environ []string // the host environment hostgit takes the basics from
}

// extra are keep's settings on top of hostgit's.
var extra = []string{"-c", "transfer.fsckObjects=true", "-c", "fetch.fsckObjects=true", "-c", "protocol.file.allow=always",
	"-c", "commit.gpgSign=false"}

// run is one git command on the git directory dir.
type run struct {
	dir      string
	workTree string // the host work tree, for listing it (hostgit.Git.WorkTree)
	args     []string
	stdin    io.Reader
	env      []string // GIT_INDEX_FILE and the like
}

func (g *Git) do(ctx context.Context, r run) (string, error) {
	h := &hostgit.Git{Environ: g.Environ, Dir: r.dir, WorkTree: r.workTree}
	out, err := h.Run(ctx, r.stdin, append(hostgit.Identity(), r.env...), append(append([]string(nil), extra...), r.args...)...)
	return string(out), err
}
