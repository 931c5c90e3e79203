package fsops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/pi-sbx/pi-sbx-backend/fsops/internal/fileio"
	"github.com/pi-sbx/pi-sbx-backend/pi/result"
)

// Replacement is one targeted edit.
type Replacement struct {
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

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
	abs := ResolveToCwd(a.Path, cwd)
	var details EditDetails
	err := q.orPrivate().Do(ctx, abs, func() error {
		if ctx.Err() != nil {
			return fileio.ErrAborted
		}
		if err := fileio.Access(abs, fileio.AccessRead|fileio.AccessWrite); err != nil {
			if code := fileio.ErrCode(err); code != "" {
				return fmt.Errorf("Could not edit file: %s. Error code: %s.", a.Path, code)
			}
			return fmt.Errorf("Could not edit file: %s. %v.", a.Path, err)
		}
		defer fileio.LockInode(abs)()
		raw, err := fileio.ReadFile(abs)
		if err != nil {
			return err
		}
		if !utf8.Valid(raw) {
			// pi would decode with U+FFFD and write that back, destroying the bytes it
			// could not decode; refuse instead and leave the file as it is.
			return fmt.Errorf("Could not edit file: %s. It is not valid UTF-8 text, and editing it would replace its undecodable bytes with U+FFFD.", a.Path)
		}
		bom := ""
		if bytes.HasPrefix(raw, []byte("\uFEFF")) {
			bom, raw = "\uFEFF", raw[len("\uFEFF"):]
		}
		// The one copy of the file held: the bytes read, LF-normalized in place (the
		// endings kept aside) and viewed as a string, never written to afterwards.
		var endings *lineEndings
		if bytes.IndexByte(raw, '\r') >= 0 {
			raw, endings = normalizeInPlace(raw)
		}
		normalized := bytesString(raw)
		edited, err := applyEdits(normalized, a.Edits, a.Path)
		if err != nil {
			return err
		}
		details = generateEditDiff(a.Path, edited)
		if ctx.Err() != nil {
			return fileio.ErrAborted
		}
		if endings != nil {
			// About the size written: a CRLF ending adds a byte to its line feed.
			size := len(bom) + edited.len() + endings.n
			return fileio.WriteFile(abs, size, func(w io.Writer) error {
				return writeOriginal(w, bom, normalized, endings, edited.reps, size)
			})
		}
		return fileio.WritePieces(abs, append([]string{bom}, edited.pieces()...)...)
	})
	if err != nil {
		return result.Result{}, err
	}
	return result.Text(fmt.Sprintf("Successfully replaced %d block(s) in %s.", len(a.Edits), a.Path), details), nil
}
