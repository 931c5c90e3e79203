package fsops

import (
	"context"
	"path/filepath"

	"github.com/pi-sbx/pi-sbx-backend/pi/result"
)

// WriteArgs are write's arguments.
type WriteArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// Write is pi's write tool: parent directories are created and the file written (see
// writeFile), in turn with other mutations of the same file through q
// (nil: the call takes turns only with itself).
func Write(ctx context.Context, cwd string, a WriteArgs, q *MutationQueue) (result.Result, error) {
	abs := ResolveToCwd(a.Path, cwd)
	err := q.orPrivate().Do(ctx, abs, func() error {
		if ctx.Err() != nil {
			return errAborted
		}
		if err := mkdirAll(filepath.Dir(abs)); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return errAborted
		}
		// Wait for an edit of the file by another process (see lockFileInode).
		defer lockFileInode(abs)()
		return writePieces(abs, a.Content)
	})
	if err != nil {
		return result.Result{}, err
	}
	return result.Text("Successfully wrote to "+a.Path, nil), nil
}
