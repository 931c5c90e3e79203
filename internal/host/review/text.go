package review

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/hostgit"
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

// ShortID is the first 12 digits of an object id, as a review names the work it shows
// (land --head takes it back).
func ShortID(id string) string { return id[:min(12, len(id))] }

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
	defer writeGitNotes(w, c)
	if len(files) == 0 {
		fmt.Fprintf(w, "No changes in %s against the workspace as it was when it started.\n", c.Sandbox)
		return
	}
	work := ""
	if c.Work != "" {
		work = " (work " + ShortID(c.Work) + ")"
	}
	fmt.Fprintf(w, "%s in %s against the workspace as it was when it started%s\n", strings.TrimPrefix(Summary(files), "review: "), c.Sandbox, work)
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

// writeGitNotes writes what the sandbox did to its own .git, flagged: land never writes
// any of it.
func writeGitNotes(w io.Writer, c Changes) {
	if len(c.GitNotes) == 0 {
		return
	}
	fmt.Fprintf(w, "\nIn the sandbox's own .git: would run on the host, never landed (%d)\n", len(c.GitNotes))
	for _, n := range c.GitNotes {
		fmt.Fprintf(w, "  ! %s\n", n)
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
// order (flagged first), the hunks of a file that can land by hunks numbered.
func Write(ctx context.Context, w io.Writer, g *hostgit.Git, c Changes, files []File) error {
	WriteStat(w, c, files)
	patches, err := Patches(ctx, g, c, files)
	if err != nil {
		return err
	}
	for i, f := range files {
		fmt.Fprintln(w)
		if f.Flagged() {
			fmt.Fprintf(w, "# RUNS ON THE HOST: %s\n", strings.Join(f.Risks, "; "))
		}
		patch := patches[i]
		if NotHunkable(f) == "" {
			patch = NumberHunks(patch) // land PATH --hunk N takes these numbers
		}
		if _, err := w.Write(patch); err != nil {
			return err
		}
	}
	return nil
}

// patchBatch is how many files one git command diffs (its pathspecs stay far below any
// argv limit).
const patchBatch = 500

// Patches returns the unified diff of each of files, in their order: one git command
// for up to patchBatch files (in the order git diffs them, which Files keeps as seq),
// cut at each "diff --git" header; a batch whose headers do not match its files one to
// one (a type change is two patches; renames paired otherwise within fewer paths) is
// diffed file by file instead.
func Patches(ctx context.Context, g *hostgit.Git, c Changes, files []File) ([][]byte, error) {
	idx := make([]int, len(files))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return files[idx[a]].seq < files[idx[b]].seq })
	out := make([][]byte, len(files))
	for start := 0; start < len(idx); start += patchBatch {
		batch := idx[start:min(start+patchBatch, len(idx))]
		args := []string{"diff-tree", "-p", "-M", "--no-commit-id", "--no-ext-diff", "--no-textconv", "--no-color", c.Base, c.Head, "--"}
		want := 0
		for _, i := range batch {
			args = append(args, files[i].paths()...)
			want++
			if files[i].Status == TypeChg {
				want++ // git shows a type change as a deletion and a creation
			}
		}
		text, err := g.Run(ctx, nil, nil, args...)
		if err != nil {
			return nil, fmt.Errorf("the diffs of %s: %w", c.Sandbox, err)
		}
		chunks := splitPatches(text)
		if len(chunks) != want {
			for _, i := range batch {
				if out[i], err = Patch(ctx, g, c, files[i]); err != nil {
					return nil, err
				}
			}
			continue
		}
		for _, i := range batch {
			out[i], chunks = chunks[0], chunks[1:]
			if files[i].Status == TypeChg {
				out[i] = append(out[i][:len(out[i]):len(out[i])], chunks[0]...)
				chunks = chunks[1:]
			}
		}
	}
	return out, nil
}

// splitPatches cuts git's patch output before each "diff --git " line (a line of a
// patch's body starts with ' ', '+', '-', '@' or '\\', never with "diff").
func splitPatches(text []byte) [][]byte {
	var out [][]byte
	for len(text) > 0 {
		next := bytes.Index(text[1:], []byte("\ndiff --git "))
		if next < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:next+2])
		text = text[next+2:]
	}
	return out
}
