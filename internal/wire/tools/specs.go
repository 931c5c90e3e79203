package tools

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
)

// The descriptions and schemas below are pi 1.6.0's, word for word: the model is tuned to them.

// Pi returns descriptions of pi's seven tools, in pi's order.
func Pi() []*Tool {
	return []*Tool{Read(), Bash(), Edit(), Write(), Grep(), Find(), Ls()}
}

// Read is pi's read tool.
func Read() *Tool {
	return &Tool{
		Name:        "read",
		Description: "Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). Images are sent as attachments. For text files, output is truncated to 2000 lines or 50KB (whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset until complete.",
		Schema: inOrder([]string{"path", "offset", "limit"}, object([]string{"path"}, map[string]*jsonschema.Schema{
			"path":   str("Path to the file to read (relative or absolute)"),
			"offset": num("Line number to start reading from (1-indexed)"),
			"limit":  num("Maximum number of lines to read"),
		})),
	}
}

// Write is pi's write tool.
func Write() *Tool {
	return &Tool{
		Name:        "write",
		Description: "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.",
		Schema: inOrder([]string{"path", "content"}, object([]string{"path", "content"}, map[string]*jsonschema.Schema{
			"path":    str("Path to the file to write (relative or absolute)"),
			"content": str("Content to write to the file"),
		})),
	}
}

// Edit is pi's edit tool, accepting the legacy argument shapes pi accepts.
func Edit() *Tool {
	return &Tool{
		Name:        "edit",
		Description: "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file. If two changes affect the same block or nearby lines, merge them into one edit instead of emitting overlapping edits. Do not include large unchanged regions just to connect distant changes.",
		Schema: inOrder([]string{"path", "edits"}, object([]string{"path", "edits"}, map[string]*jsonschema.Schema{
			"path": str("Path to the file to edit (relative or absolute)"),
			"edits": {
				Type:        "array",
				Description: "One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead.",
				Items: inOrder([]string{"oldText", "newText"}, object([]string{"oldText", "newText"}, map[string]*jsonschema.Schema{
					"oldText": str("Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call."),
					"newText": str("Replacement text for this targeted edit."),
				})),
			},
		})),
		Prepare: PrepareEditArgs,
		Parsed:  []string{"edits"},
	}
}

// Grep is pi's grep tool.
func Grep() *Tool {
	return &Tool{
		Name:        "grep",
		Description: "Search file contents for a pattern. Returns matching lines with file paths and line numbers. Respects .gitignore. Output is truncated to 100 matches or 50KB (whichever is hit first). Long lines are truncated to 500 chars.",
		Schema: inOrder([]string{"pattern", "path", "glob", "ignoreCase", "literal", "context", "limit"}, object([]string{"pattern"}, map[string]*jsonschema.Schema{
			"pattern":    str("Search pattern (regex or literal string)"),
			"path":       str("Directory or file to search (default: current directory)"),
			"glob":       str("Filter files by glob pattern relative to path, e.g. 'src/**/*.ts'. Without '/', e.g. '*.ts', it matches file names at any depth"),
			"ignoreCase": boolean("Case-insensitive search (default: false)"),
			"literal":    boolean("Treat pattern as literal string instead of regex (default: false)"),
			"context":    num("Number of lines to show before and after each match (default: 0)"),
			"limit":      num("Maximum number of matches to return (default: 100)"),
		})),
	}
}

// Find is pi's find tool.
func Find() *Tool {
	return &Tool{
		Name:        "find",
		Description: "Search for files by glob pattern. Returns matching file paths relative to the search directory. Respects .gitignore. Output is truncated to 1000 results or 50KB (whichever is hit first).",
		Schema: inOrder([]string{"pattern", "path", "limit"}, object([]string{"pattern"}, map[string]*jsonschema.Schema{
			"pattern": str("Glob pattern relative to the search directory, e.g. 'src/**/*.ts'. Without '/', e.g. '*.ts', it matches file names at any depth"),
			"path":    str("Directory to search in (default: current directory)"),
			"limit":   num("Maximum number of results (default: 1000)"),
		})),
	}
}

// Ls is pi's ls tool.
func Ls() *Tool {
	return &Tool{
		Name:        "ls",
		Description: "List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. Includes dotfiles. Output is truncated to 500 entries or 50KB (whichever is hit first).",
		Schema: inOrder([]string{"path", "limit"}, object(nil, map[string]*jsonschema.Schema{
			"path":  str("Directory to list (default: current directory)"),
			"limit": num("Maximum number of entries to return (default: 500)"),
		})),
	}
}

// Bash is pi's bash tool.
func Bash() *Tool {
	return &Tool{
		Name:        "bash",
		Description: "Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to last 2000 lines or 50KB (whichever is hit first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds.",
		Schema: inOrder([]string{"command", "timeout"}, object([]string{"command"}, map[string]*jsonschema.Schema{
			"command": str("Shell command to execute"),
			"timeout": num("Timeout in seconds (optional, no default timeout)"),
		})),
	}
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

// inOrder sets s's property order to pi's: the order its tools/list shows them, and
// the order validation reports their errors in.
func inOrder(names []string, s *jsonschema.Schema) *jsonschema.Schema {
	s.PropertyOrder = names
	return s
}
