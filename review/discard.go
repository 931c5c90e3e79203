package review

import (
	"context"
	"fmt"

	"github.com/pi-sbx/pi-sbx-backend/hostgit"
)

// Forget deletes the refs that keep c's work (c.Refs) from the object store: discard of
// the work of a session whose sandbox is gone. The host tree is not touched; the objects
// go with git's next gc. (A running sandbox still holds its work: its own side resets
// it first, or the next review would fetch it again.)
func Forget(ctx context.Context, g *hostgit.Git, c Changes) error {
	for _, ref := range c.Refs {
		if _, err := g.Run(ctx, nil, nil, "update-ref", "-d", ref); err != nil {
			return fmt.Errorf("discarding the work of %s: %w", c.Sandbox, err)
		}
	}
	return nil
}
