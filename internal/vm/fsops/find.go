package fsops

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/fileio"
	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/walk"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/truncate"
)

// FindArgs are find's arguments.
type FindArgs struct {
	Pattern string   `json:"pattern"`
	Path    string   `json:"path,omitempty"`
	Limit   *float64 `json:"limit,omitempty"`
}

// FindDetails is find's details object; nil when there is nothing to report.
type FindDetails struct {
	ResultLimitReached int              `json:"resultLimitReached,omitempty"`
	Truncation         *truncate.Result `json:"truncation,omitempty"`
}

const findDefaultLimit = 1000

// Find is pi's find tool, which runs `fd --hidden --glob`: files, directories (with a
// trailing "/") and links below the search directory whose name — or, for a pattern
// containing "/", whose path relative to the search directory — matches the glob, with
// fd's smart case, and .gitignore, .ignore, .fdignore, the global gitignore and fd's
// global ignore file honoured. Unlike fd under pi, ".git" directories are never listed
// or entered (pi's own remote-backend contract ignores them too), and outside a git
// repository .gitignore counts, as pi asks of fd (Debian's fd 8.6 refuses the flag).
// Results come in sorted path order.
func Find(ctx context.Context, cwd string, a FindArgs) (result.Result, error) {
	if ctx.Err() != nil {
		return result.Result{}, fileio.ErrAborted
	}
	p := a.Path
	if p == "" {
		p = "."
	}
	root, err := ResolveToCwd(p, cwd)
	if err != nil {
		return result.Result{}, err
	}
	limit := effectiveLimit(a.Limit, findDefaultLimit)
	if strings.IndexByte(a.Pattern+root, 0) >= 0 {
		if err := spawnNullBytes(fdArgs(a.Pattern, root, limit)); err != nil {
			return result.Result{}, err
		}
	}
	if err := fdMaxResultsError(a.Limit); err != nil {
		return result.Result{}, err
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return result.Result{}, newError("[fd error]: Search path '" + root + "' is not a directory.\n[fd error]: No valid search paths given.")
	}
	match, err := findMatcher(a.Pattern, root)
	if err != nil {
		return result.Result{}, err
	}
	opt := walk.Options{
		Names:      walk.IgnoreFileNames{Custom: ".fdignore"},
		RequireGit: insideGitRepo(root), // pi passes --no-require-git outside repositories
		SkipGitDir: true,
		Global:     walk.LoadGlobalGitignore(),
		Explicit:   walk.LoadFdGlobalIgnore(),
	}
	var found []string
	limitReached := false
	err = walk.Tree(ctx, root, opt, func(e walk.Entry) bool {
		if !match(e) {
			return true
		}
		rel := e.Rel
		if !utf8.ValidString(rel) {
			rel = decodeLossy([]byte(rel)) // pi reads fd's output as UTF-8
		}
		for _, line := range fdLines(root, rel, e.IsDir()) {
			if len(found) == limit {
				limitReached = true
				return false
			}
			found = append(found, line)
		}
		return true
	})
	if err != nil {
		return result.Result{}, fileio.ErrAborted
	}
	if len(found) == 0 {
		return result.Text("No files found matching pattern", nil), nil
	}
	tr := truncate.Head(strings.Join(found, "\n"), truncate.Options{MaxLines: jsMaxSafeInteger})
	text := tr.Content
	var d FindDetails
	var notices []string
	if limitReached {
		notices = append(notices, strconv.Itoa(limit)+" results limit reached. Use limit="+strconv.Itoa(2*limit)+" for more, or refine pattern")
		d.ResultLimitReached = limit
	}
	if tr.Truncated {
		notices = append(notices, byteLimitNotice())
		d.Truncation = &tr
	}
	return withNotices(text, notices, d), nil
}

// findMatcher builds the entry test for pattern as pi hands it to fd: a leading "./"
// dropped; without "/" the glob matches the entry's name; with "/" it matches the whole
// path, a relative pattern being anchored at the search root; fd's smart case (an
// all-lowercase pattern ignores case); an empty pattern matches everything.
func findMatcher(pattern, root string) (func(walk.Entry) bool, error) {
	for strings.HasPrefix(pattern, "./") {
		pattern = pattern[2:]
	}
	if pattern == "" {
		return func(walk.Entry) bool { return true }, nil
	}
	ignoreCase := fdIgnoreCase(pattern, root)
	re, err := walk.CompileGlob(pattern, ignoreCase)
	if err != nil {
		shown := pattern
		if strings.Contains(pattern, "/") && !filepath.IsAbs(pattern) {
			shown = globEscape(strings.TrimRight(root, "/")) + "/" + pattern
		}
		return nil, newError("[fd error]: error parsing glob '" + shown + "': " + walk.GlobErrorText(err))
	}
	switch {
	case !strings.Contains(pattern, "/"):
		if lit := literalGlob(pattern); lit != "" && !ignoreCase {
			return func(e walk.Entry) bool { return e.Name == lit }, nil
		}
		return func(e walk.Entry) bool { return re.MatchString(e.Name) }, nil
	case filepath.IsAbs(pattern):
		return func(e walk.Entry) bool { return re.MatchString(e.Abs) }, nil
	default:
		return func(e walk.Entry) bool { return re.MatchString(e.Rel) }, nil
	}
}

// literalGlob returns pattern if it has no glob syntax at all.
func literalGlob(pattern string) string {
	if walk.HasGlobMeta(pattern) {
		return ""
	}
	return pattern
}

var globMeta = regexp.MustCompile(`[\\*?\[\]{}]`)

// globEscape is pi's escaping of the search root before it prefixes a path pattern.
func globEscape(s string) string { return globMeta.ReplaceAllString(s, `\$0`) }

// insideGitRepo is pi's test: a ".git" exists in dir or one of its ancestors.
func insideGitRepo(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		if d == filepath.Dir(d) {
			return false
		}
	}
}

// isJSWhitespace reports whether String.prototype.trim removes r.
func isJSWhitespace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}
