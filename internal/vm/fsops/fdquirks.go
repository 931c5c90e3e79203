package fsops

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/js"
)

// What pi's find gets from fd itself, reproduced: how fd reads --max-results, decides
// smart case, and how pi splits fd's output into lines.

// fdMaxResultsError is fd's refusal of the --max-results value pi passes, which is
// String(limit + 1) as JavaScript prints it: fd parses an unsigned 64-bit integer, so
// exponent notation ("1e+21") has an invalid digit and 1e20 is too large.
func fdMaxResultsError(limit *float64) error {
	f := float64(findDefaultLimit)
	if limit != nil {
		f = math.Max(1, math.Floor(*limit))
	}
	s := js.String(f + 1)
	reason := ""
	if strings.Trim(s, "0123456789") != "" {
		reason = "invalid digit found in string"
	} else if _, err := strconv.ParseUint(s, 10, 64); err != nil {
		reason = "number too large to fit in target type"
	}
	if reason == "" {
		return nil
	}
	return newError("error: Invalid value '" + s + "' for '--max-results <count>': " + reason + "\n\nFor more information try '--help'")
}

// fdHasUppercase is fd's smart-case test on a glob: fd asks whether the glob's regex has
// an uppercase character, and globset writes every non-ASCII character as its UTF-8
// bytes, each taken for the Latin-1 character of that value. So beyond ASCII capitals,
// any character whose first byte is 0xC0–0xDE but not 0xD7 (U+0080–U+07BF outside
// U+05C0–U+05FF: é as much as É) makes the search case-sensitive.
func fdHasUppercase(glob string) bool {
	for _, r := range glob {
		if r < 0x80 {
			if unicode.IsUpper(r) {
				return true
			}
			continue
		}
		if lead := string(r)[0]; lead >= 0xC0 && lead <= 0xDE && lead != 0xD7 {
			return true
		}
	}
	return false
}

// fdIgnoreCase is whether fd matches pattern (pi's, its "./" dropped) case-insensitively
// under pi's find: pi passes --ignore-case for a relative path pattern that JavaScript's
// toLowerCase leaves unchanged; otherwise fd's smart case decides, on the glob fd is
// given (for a relative path pattern, prefixed with the escaped search path).
func fdIgnoreCase(pattern, root string) bool {
	if !strings.Contains(pattern, "/") || filepath.IsAbs(pattern) {
		return !fdHasUppercase(pattern)
	}
	if pattern == jsLower(pattern) {
		return true
	}
	return !fdHasUppercase(globEscape(strings.TrimRight(root, "/")) + "/" + pattern)
}

// fdLines is what pi's find makes of the line fd prints for an entry (its path below
// root, with a "/" for a directory): Node's readline splits it at "\n", "\r\n" and a lone
// "\r"; each piece is trimmed, empty ones dropped, and absolute ones made relative to
// root (keeping a trailing "/").
func fdLines(root, rel string, dir bool) []string {
	line := root + "/" + rel
	if dir {
		line += "/"
	}
	if !strings.ContainsAny(line, "\r\n") && !strings.ContainsFunc(rel, isJSWhitespace) {
		if dir {
			return []string{rel + "/"}
		}
		return []string{rel}
	}
	var out []string
	for _, piece := range strings.Split(strings.ReplaceAll(strings.ReplaceAll(line, "\r\n", "\n"), "\r", "\n"), "\n") {
		piece = strings.TrimFunc(piece, isJSWhitespace)
		if piece == "" {
			continue
		}
		if filepath.IsAbs(piece) {
			trailing := strings.HasSuffix(piece, "/")
			r, err := filepath.Rel(root, piece)
			if err != nil {
				r = piece
			}
			if r == "." {
				r = ""
			}
			if trailing && !strings.HasSuffix(r, "/") {
				r += "/"
			}
			piece = r
		}
		out = append(out, piece)
	}
	return out
}
