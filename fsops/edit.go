package fsops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/pi-sbx/pi-sbx-backend/result"
)

// Replacement is one targeted edit.
type Replacement struct {
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

// EditArgs are edit's arguments after PrepareEditArgs.
type EditArgs struct {
	Path  string        `json:"path"`
	Edits []Replacement `json:"edits"`
}

// PrepareEditArgs is pi's prepareEditArguments, run before schema validation: edits sent
// as a JSON string are parsed, a single {oldText, newText} object becomes a one-element
// array, and legacy top-level oldText/newText are appended to edits. It never fails;
// whatever it cannot repair is left for validation to reject.
func PrepareEditArgs(in map[string]any) (map[string]any, error) {
	if in == nil {
		return in, nil
	}
	switch e := in["edits"].(type) {
	case string:
		var parsed any
		if err := json.Unmarshal([]byte(e), &parsed); err == nil {
			if arr, ok := parsed.([]any); ok {
				in["edits"] = arr
			} else if isSingleEdit(parsed) {
				in["edits"] = []any{parsed}
			}
		}
	default:
		if isSingleEdit(e) {
			in["edits"] = []any{e}
		}
	}
	oldText, ok1 := in["oldText"].(string)
	newText, ok2 := in["newText"].(string)
	if !ok1 || !ok2 {
		return in, nil
	}
	var edits []any
	if arr, ok := in["edits"].([]any); ok {
		edits = append(edits, arr...)
	}
	edits = append(edits, map[string]any{"oldText": oldText, "newText": newText})
	out := make(map[string]any, len(in))
	for k, v := range in {
		if k != "oldText" && k != "newText" {
			out[k] = v
		}
	}
	out["edits"] = edits
	return out, nil
}

func isSingleEdit(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	_, ok1 := m["oldText"].(string)
	_, ok2 := m["newText"].(string)
	return ok1 && ok2
}

// Edit is pi's edit tool: each edits[i].oldText matched once in the original file
// (exactly, else after pi's fuzzy normalization), replaced, and the file written back with
// its BOM and line endings, atomically and in turn with other mutations of the file.
func Edit(ctx context.Context, cwd string, a EditArgs) (result.Result, error) {
	if len(a.Edits) == 0 {
		return result.Result{}, errors.New("Edit tool input is invalid. edits must contain at least one replacement.")
	}
	abs := ResolveToCwd(a.Path, cwd)
	var details EditDetails
	err := mutationQueue(ctx).Do(ctx, abs, func() error {
		if ctx.Err() != nil {
			return errAborted
		}
		if err := unix.Access(abs, unix.R_OK|unix.W_OK); err != nil {
			if code := errCode(err); code != "" {
				return fmt.Errorf("Could not edit file: %s. Error code: %s.", a.Path, code)
			}
			return fmt.Errorf("Could not edit file: %s. %v.", a.Path, err)
		}
		defer lockFileInode(abs)()
		raw, err := readFileNode(abs)
		if err != nil {
			return err
		}
		if !utf8.Valid(raw) {
			// pi would decode with U+FFFD and write that back, destroying the bytes it
			// could not decode; refuse instead and leave the file as it is.
			return fmt.Errorf("Could not edit file: %s. It is not valid UTF-8 text, and editing it would replace its undecodable bytes with U+FFFD.", a.Path)
		}
		text := string(raw)
		bom := ""
		if strings.HasPrefix(text, "\uFEFF") {
			bom, text = "\uFEFF", text[len("\uFEFF"):]
		}
		normalized := normalizeToLF(text)
		updated, reps, err := applyEdits(normalized, a.Edits, a.Path)
		if err != nil {
			return err
		}
		details = generateEditDiff(a.Path, normalized, updated, reps)
		if ctx.Err() != nil {
			return errAborted
		}
		final := updated
		if text != normalized {
			final = applyToOriginal(text, reps)
		}
		return replaceFile(abs, bom, final)
	})
	if err != nil {
		return result.Result{}, err
	}
	return result.Text(fmt.Sprintf("Successfully replaced %d block(s) in %s.", len(a.Edits), a.Path), details), nil
}
