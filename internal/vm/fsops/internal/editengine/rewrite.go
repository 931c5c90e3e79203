package editengine

import (
	"bytes"
	"context"
	"io"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/fileio"
)

// rewrite applies edits to raw, the content of the file abs (read by the caller, under
// its lock), as pi's edit does — BOM set aside, line endings normalized to LF for
// matching — and writes the result back with the BOM and the file's own line endings.
// path is the path as given, for the messages and the diff. A cancelled ctx stops it
// before anything is written.
func Rewrite(ctx context.Context, abs string, raw []byte, edits []Replacement, path string) (Details, error) {
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
	edited, err := applyEdits(normalized, edits, path)
	if err != nil {
		return Details{}, err
	}
	details := generateEditDiff(path, edited)
	if ctx.Err() != nil {
		return Details{}, fileio.ErrAborted
	}
	if endings != nil {
		// About the size written: a CRLF ending adds a byte to its line feed.
		size := len(bom) + edited.len() + endings.n
		return details, fileio.WriteFile(abs, size, func(w io.Writer) error {
			return writeOriginal(w, bom, normalized, endings, edited.reps, size)
		})
	}
	return details, fileio.WritePieces(abs, append([]string{bom}, edited.pieces()...)...)
}
