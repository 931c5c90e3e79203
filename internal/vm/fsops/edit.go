package fsops

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/editengine"
	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/fileio"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
)

// Replacement is one targeted edit.
type Replacement = editengine.Replacement

// EditDetails is edit's details object, as pi builds it (generateEditDiff).
type EditDetails = editengine.Details

// EditArgs are edit's arguments (after tools.PrepareEditArgs, pi's argument repair).
type EditArgs struct {
	Path  string        `json:"path"`
	Edits []Replacement `json:"edits"`
}

// Edit is pi's edit tool: each edits[i].oldText matched once in the original file
// (exactly, else after pi's fuzzy normalization), replaced, and the file written back with
// its BOM and line endings (see fileio.WriteFile), in turn with other mutations of the file.
// Concurrent mutations of one file take turns through q (nil: only with itself).
func Edit(ctx context.Context, cwd string, a EditArgs, q *MutationQueue) (result.Result, error) {
	if len(a.Edits) == 0 {
		return result.Result{}, errors.New("Edit tool input is invalid. edits must contain at least one replacement.")
	}
	abs, err := ResolveToCwd(a.Path, cwd)
	if err != nil {
		return result.Result{}, err
	}
	if err := pathNullBytes(abs); err != nil {
		return result.Result{}, err
	}
	var details EditDetails
	err = q.orPrivate().Do(ctx, abs, func() error {
		if ctx.Err() != nil {
			return fileio.ErrAborted
		}
		if err := fileio.Access(abs, fileio.AccessRead|fileio.AccessWrite); err != nil {
			if code := fileio.ErrCode(err); code != "" {
				return fmt.Errorf("Could not edit file: %s. Error code: %s.", a.Path, code)
			}
			return fmt.Errorf("Could not edit file: %s. %v.", a.Path, err)
		}
		// Waits for an edit of the file by another process (see LockInode).
		raw, unlock, err := fileio.ReadFileLocked(abs)
		if err != nil {
			return err
		}
		defer unlock()
		if !utf8.Valid(raw) {
			// pi would decode with U+FFFD and write that back, destroying the bytes it
			// could not decode; refuse instead and leave the file as it is.
			return fmt.Errorf("Could not edit file: %s. It is not valid UTF-8 text, and editing it would replace its undecodable bytes with U+FFFD.", a.Path)
		}
		details, err = editengine.Rewrite(ctx, abs, raw, a.Edits, a.Path)
		return err
	})
	if err != nil {
		return result.Result{}, err
	}
	return result.Text(fmt.Sprintf("Successfully replaced %d block(s) in %s.", len(a.Edits), a.Path), details), nil
}
