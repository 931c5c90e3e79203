package fsops

import (
	"context"
	"path/filepath"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/fileio"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
)

// WriteArgs are write's arguments.
type WriteArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// Write is pi's write tool: parent directories are created and the file written (see
// WriteFile), in turn with other mutations of the same file through q
// (nil: the call takes turns only with itself).
func Write(ctx context.Context, cwd string, a WriteArgs, q *MutationQueue) (result.Result, error) {
	abs, err := ResolveToCwd(a.Path, cwd)
	if err != nil {
		return result.Result{}, err
	}
	if err := pathNullBytes(abs); err != nil {
		return result.Result{}, err
	}
	err = q.orPrivate().Do(ctx, abs, func() error {
		if ctx.Err() != nil {
			return fileio.ErrAborted
		}
		if err := fileio.MkdirAll(filepath.Dir(abs)); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return fileio.ErrAborted
		}
		// Wait for an edit of the file by another process (see LockInode).
		return fileio.WritePiecesLocked(abs, a.Content)
	})
	if err != nil {
		return result.Result{}, err
	}
	return result.Text("Successfully wrote to "+a.Path, nil), nil
}
