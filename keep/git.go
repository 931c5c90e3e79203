package keep

import (
	"context"
	"io"
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/hostgit"
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

// run is one git command: args start with --git-dir= (and --work-tree=).
type run struct {
	args  []string
	stdin io.Reader
	env   []string // GIT_INDEX_FILE and the like
}

func (g *Git) do(ctx context.Context, r run) (string, error) {
	h := &hostgit.Git{Environ: g.Environ}
	args := r.args
	for len(args) > 0 {
		if v, ok := strings.CutPrefix(args[0], "--git-dir="); ok {
			h.Dir, args = v, args[1:]
		} else if v, ok := strings.CutPrefix(args[0], "--work-tree="); ok {
			h.WorkTree, args = v, args[1:]
		} else {
			break
		}
	}
	env := append(hostgit.Identity(), r.env...)
	out, err := h.Run(ctx, r.stdin, env, append(append([]string(nil), extra...), args...)...)
	return string(out), err
}
