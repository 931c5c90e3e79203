package fsops

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/js"
)

// A NUL byte cannot be part of a path or an argument, and Node refuses it before any
// system call, with its own ERR_INVALID_ARG_VALUE message: pi's file tools at their
// first fs call (naming the argument 'path' and the resolved path), grep and find when
// they spawn rg and fd (naming the first such argument by its index in the argument
// array pi builds). These reproduce those messages; elsewhere a NUL would reach the
// system as EINVAL, or cut the string short.

// pathNullBytes is Node's refusal of the resolved path abs, when it holds a NUL byte.
func pathNullBytes(abs string) error {
	if strings.IndexByte(abs, 0) < 0 {
		return nil
	}
	return newError(js.InvalidArgValue("path", abs, "must be a string, Uint8Array, or URL without null bytes"))
}

// spawnNullBytes is child_process.spawn's refusal of args (the program's arguments)
// when one holds a NUL byte.
func spawnNullBytes(args []string) error {
	for i, a := range args {
		if strings.IndexByte(a, 0) >= 0 {
			return newError(js.InvalidArgValue("args["+strconv.Itoa(i)+"]", a, "must be a string without null bytes"))
		}
	}
	return nil
}

// leadingDotSlash is what pi's grep drops from a glob ("./src/*.ts" → "src/*.ts").
var leadingDotSlash = regexp.MustCompile(`^(!?)(?:\./)+`)

// rgArgs is the argument array pi's grep gives rg (grep.ts), as far as spawn's check of
// it needs: the option values and the pattern, in their places.
func rgArgs(a GrepArgs, ctxLines int, isDir bool, searchPath string) []string {
	args := []string{"--no-config", "--json", "--line-number", "--color=never", "--hidden"}
	if a.IgnoreCase {
		args = append(args, "--ignore-case")
	}
	if a.Literal {
		args = append(args, "--fixed-strings")
	}
	if a.Glob != "" {
		args = append(args, "--glob", leadingDotSlash.ReplaceAllString(a.Glob, "$1"))
	}
	if ctxLines > 0 {
		args = append(args, "--context", strconv.Itoa(ctxLines))
	}
	if isDir {
		searchPath = "."
	}
	return append(args, "--", a.Pattern, searchPath)
}

// fdArgs is the argument array pi's find gives fd on POSIX systems (find.ts), as far as
// spawn's check of it needs.
func fdArgs(pattern, searchPath string, limit int) []string {
	args := []string{"--color=never", "--hidden"}
	if !insideGitRepo(searchPath) {
		args = append(args, "--no-require-git")
	}
	for strings.HasPrefix(pattern, "./") {
		pattern = pattern[2:]
	}
	isPathPattern := strings.Contains(pattern, "/")
	ignoreCase := pattern == jsLower(pattern)
	args = append(args, "--glob", "--max-results", strconv.Itoa(limit+1))
	if isPathPattern {
		args = append(args, "--full-path")
		if !filepath.IsAbs(pattern) {
			pattern = globEscape(strings.TrimRight(searchPath, "/")) + "/" + pattern
			if ignoreCase {
				args = append(args, "--ignore-case")
			}
		}
	}
	return append(args, "--", pattern, searchPath)
}
