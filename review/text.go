package review

import (
	"context"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"unicode"

	"github.com/pi-sbx/pi-sbx-backend/hostgit"
)

// Quote prints a path as it is, or Go-quoted when it holds a control character, a quote
// or a backslash (a newline in a name must not fake a line of the review).
func Quote(p string) string {
	for _, r := range p {
		if r == '"' || r == '\\' || unicode.IsControl(r) || r == unicode.ReplacementChar {
			return strconv.Quote(p)
		}
	}
	return p
}

// Filter keeps the files at or beneath one of paths (none: all of them).
func Filter(files []File, paths []string) []File {
	if len(paths) == 0 {
		return files
	}
	var out []File
	for _, f := range files {
		for _, p := range paths {
			p = path.Clean(p)
			hit := p == "."
			for _, fp := range f.paths() {
				hit = hit || fp == p || strings.HasPrefix(fp, p+"/")
			}
			if hit {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// Summary is the one line a status bar shows: "review: N files changed".
func Summary(files []File) string {
	if len(files) == 1 {
		return "review: 1 file changed"
	}
	return fmt.Sprintf("review: %d files changed", len(files))
}

// WriteStat writes the review's list: the flagged files in a section of their own, first,
// each with why; then the others. A line: status, +x/-x, path, line counts or "binary".
func WriteStat(w io.Writer, c Changes, files []File) {
	if len(files) == 0 {
		fmt.Fprintf(w, "No changes in %s against the workspace as it was when it started.\n", c.Sandbox)
		return
	}
	fmt.Fprintf(w, "%s in %s against the workspace as it was when it started\n", strings.TrimPrefix(Summary(files), "review: "), c.Sandbox)
	var flagged, plain []File
	for _, f := range files {
		if f.Flagged() {
			flagged = append(flagged, f)
		} else {
			plain = append(plain, f)
		}
	}
	if len(flagged) > 0 {
		fmt.Fprintf(w, "\nRuns on the host: review these first (%d) — land --all leaves them; name each to land it\n", len(flagged))
		for _, f := range flagged {
			fmt.Fprintf(w, "  %s\n", statLine(f))
			for _, why := range f.Risks {
				fmt.Fprintf(w, "      ! %s\n", why)
			}
		}
	}
	if len(plain) > 0 {
		fmt.Fprintf(w, "\nOther changes (%d)\n", len(plain))
		for _, f := range plain {
			fmt.Fprintf(w, "  %s\n", statLine(f))
		}
	}
}

// statLine is one file of the list.
func statLine(f File) string {
	name := Quote(f.Path)
	if f.Status == Renamed {
		name = Quote(f.OldPath) + " -> " + name
	}
	mode := "  "
	switch {
	case f.NewMode == ModeExec && f.OldMode != ModeExec:
		mode = "+x"
	case f.OldMode == ModeExec && f.NewMode == ModeFile:
		mode = "-x"
	}
	var what string
	switch {
	case f.NewMode == ModeSymlink:
		what = "symlink"
	case f.Binary:
		what = "binary"
	case f.Status == Deleted:
		what = fmt.Sprintf("-%d", f.Removed)
	default:
		what = fmt.Sprintf("+%d -%d", f.Added, f.Removed)
	}
	return fmt.Sprintf("%s %s %s  (%s)", f.Status, mode, name, what)
}

// Write writes the whole review: the list, then each file's unified diff in the same
// order (flagged first).
func Write(ctx context.Context, w io.Writer, g *hostgit.Git, c Changes, files []File) error {
	WriteStat(w, c, files)
	for _, f := range files {
		patch, err := Patch(ctx, g, c, f)
		if err != nil {
			return err
		}
		fmt.Fprintln(w)
		if f.Flagged() {
			fmt.Fprintf(w, "# RUNS ON THE HOST: %s\n", strings.Join(f.Risks, "; "))
		}
		if _, err := w.Write(patch); err != nil {
			return err
		}
	}
	return nil
}
