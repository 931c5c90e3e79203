// Package review is what the user does with a sandbox's work before any of it reaches
// the host: see what changed against the workspace as it was when the sandbox started
// (per file, renames, binaries, a unified diff, and the files that would run on the host
// flagged first), land chosen files into the host's working tree, or discard the work.
//
// It knows nothing of sandboxes or protocols: the work is two commits in a git object
// store on the host (Changes), and git runs only through hostgit, which lets nothing of
// the repository or the work run. Land writes blob contents itself, never by a git
// checkout into the host tree.
package review

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/hostgit"
)

// Changes are a sandbox's work as two commits in a host-side object store.
type Changes struct {
	// GitDir is the object store holding both commits (a private bare repository under
	// the user's state directory, borrowing a git workspace's objects, or the
	// workspace's own .git).
	GitDir string
	// Base is the host workspace as it was when the sandbox started, moved forward for
	// every path landed since.
	Base string
	// Head is the sandbox's current work.
	Head string
	// Root is the host workspace the paths are relative to.
	Root string
	// Sandbox names the sandbox, for messages.
	Sandbox string
	// Work, when set, is Head's tree id (WorkID): what the work is, whichever commit
	// carries it (a sandbox's work is committed afresh at each collect). A review names
	// it; land's Selection.Head checks it.
	Work string
	// BaseRef, when set, is the ref holding Base: land moves it to the commit that
	// records what it wrote, so the next review shows only what is left.
	BaseRef string
	// RecordBase, when set, is the commit a land is recorded on instead of Base (and
	// BaseRef's value then): a land of some calls' net change (Base the checkpoint
	// before them) still moves the start state forward for those paths only.
	RecordBase string
	// GitNotes say what the sandbox did to its own .git (hooks, config, attributes):
	// never part of the work nor landed, shown so that the user knows it tried.
	GitNotes []string
}

// WorkID returns c with Work set: Head's tree id.
func WorkID(ctx context.Context, g *hostgit.Git, c Changes) (Changes, error) {
	out, err := g.Run(ctx, nil, nil, "rev-parse", "--verify", c.Head+"^{tree}")
	if err != nil {
		return c, fmt.Errorf("reading the work of %s: %w", c.Sandbox, err)
	}
	c.Work = strings.TrimSpace(string(out))
	return c, nil
}

// Status is what happened to a file.
type Status string

// The statuses, as git's raw diff letters.
const (
	Added    Status = "A"
	Modified Status = "M"
	Deleted  Status = "D"
	Renamed  Status = "R"
	TypeChg  Status = "T" // a file became a symlink or the other way round
)

// Git's file modes as they appear in trees.
const (
	ModeFile    = "100644"
	ModeExec    = "100755"
	ModeSymlink = "120000"
	ModeGitlink = "160000"
	modeNone    = "000000"
)

// File is one changed path.
type File struct {
	Path    string // the path in Head (for a deletion, the path in Base)
	OldPath string // the path in Base, for a rename
	Status  Status
	OldMode string // "" when the file did not exist in Base
	NewMode string // "" when it does not exist in Head
	OldID   string
	NewID   string
	Binary  bool
	Added   int // lines, for text files
	Removed int
	// Risks say why the file would run on the host (a hook, a Makefile, +x, …); a file
	// with any is flagged and shown first.
	Risks []string
	// seq is the file's place in git's own order (the raw diff's), in which a patch of
	// many files comes.
	seq int
}

// ModeChanged reports a change of the executable bit alone or with the content.
func (f File) ModeChanged() bool {
	return f.OldMode != "" && f.NewMode != "" && f.OldMode != f.NewMode
}

// Flagged reports a file that would run on the host.
func (f File) Flagged() bool { return len(f.Risks) > 0 }

// paths are the paths f touches in the host tree: the old one of a rename too.
func (f File) paths() []string {
	if f.OldPath != "" {
		return []string{f.OldPath, f.Path}
	}
	return []string{f.Path}
}

// Git returns the git runner for c's object store, from the host environment environ.
func (c Changes) Git(environ []string) *hostgit.Git {
	return &hostgit.Git{Dir: c.GitDir, Environ: environ}
}

// Files lists what Head changed against Base: the flagged files first, each group in
// path order.
func Files(ctx context.Context, g *hostgit.Git, c Changes) ([]File, error) {
	if c.Base == "" || c.Head == "" {
		return nil, fmt.Errorf("the work of %s has no base or head commit", c.Sandbox)
	}
	// One diff for both listings: git writes the raw records, then the numstat ones.
	out, err := g.Run(ctx, nil, nil, "diff-tree", "-r", "-z", "-M", "--no-abbrev", "--raw", "--numstat", "--no-commit-id", c.Base, c.Head)
	if err != nil {
		return nil, fmt.Errorf("listing the changes of %s: %w", c.Sandbox, err)
	}
	fields := bytes.Split(out, []byte{0})
	files, n, err := parseRaw(fields)
	if err != nil {
		return nil, fmt.Errorf("listing the changes of %s: %w", c.Sandbox, err)
	}
	if err := addNumstat(files, fields[n:]); err != nil {
		return nil, fmt.Errorf("counting the changed lines of %s: %w", c.Sandbox, err)
	}
	if err := classify(ctx, g, c, files); err != nil {
		return nil, err
	}
	sortFlaggedFirst(files)
	return files, nil
}

// parseRaw reads the raw records of `git diff-tree -r -z --raw` output split at its
// NULs: ":OLDMODE NEWMODE OLDID NEWID STATUS\0PATH\0" (a rename:
// "R<score>\0OLD\0NEW\0"). It stops at the first field that is not a record's head
// (where --numstat's records start) and returns how many fields it read.
func parseRaw(fields [][]byte) ([]File, int, error) {
	var files []File
	i := 0
	for ; i < len(fields); i++ {
		head := string(fields[i])
		if !strings.HasPrefix(head, ":") {
			break
		}
		meta := strings.Fields(head[1:])
		if len(meta) != 5 || i+1 >= len(fields) {
			return nil, 0, fmt.Errorf("unexpected raw diff record %q", head)
		}
		f := File{OldMode: meta[0], NewMode: meta[1], OldID: meta[2], NewID: meta[3], Status: Status(meta[4][:1])}
		i++
		f.Path = string(fields[i])
		if f.Status == Renamed || f.Status == "C" {
			if i+1 >= len(fields) {
				return nil, 0, fmt.Errorf("rename record without its new path")
			}
			f.Status = Renamed
			f.OldPath = f.Path
			i++
			f.Path = string(fields[i])
		}
		if f.OldMode == modeNone {
			f.OldMode, f.OldID = "", ""
		}
		if f.NewMode == modeNone {
			f.NewMode, f.NewID = "", ""
		}
		switch f.Status {
		case Added, Modified, Deleted, Renamed, TypeChg:
		default:
			return nil, 0, fmt.Errorf("unexpected change status %q for %q", meta[4], f.Path)
		}
		f.seq = len(files)
		files = append(files, f)
	}
	return files, i, nil
}

// addNumstat sets the line counts and the binary flag from the records of
// `git diff-tree --numstat -z` split at its NULs: "ADDED\tREMOVED\tPATH", a rename
// "ADDED\tREMOVED\t" then OLD and NEW, "-\t-" for binary.
func addNumstat(files []File, fields [][]byte) error {
	byPath := make(map[string]*File, len(files))
	for i := range files {
		byPath[files[i].Path] = &files[i]
	}
	for i := 0; i < len(fields); i++ {
		rec := string(fields[i])
		if rec == "" && i == len(fields)-1 {
			break
		}
		parts := strings.SplitN(rec, "\t", 3)
		if len(parts) != 3 {
			return fmt.Errorf("unexpected numstat record %q", rec)
		}
		path := parts[2]
		if path == "" { // a rename: the old and new paths follow
			if i+2 >= len(fields) {
				return fmt.Errorf("numstat rename record without its paths")
			}
			path = string(fields[i+2])
			i += 2
		}
		f, ok := byPath[path]
		if !ok {
			continue // a submodule or the like, which the raw diff names the same way
		}
		if parts[0] == "-" {
			f.Binary = true
			continue
		}
		f.Added, _ = strconv.Atoi(parts[0])
		f.Removed, _ = strconv.Atoi(parts[1])
	}
	return nil
}

// Patch returns the unified diff of one file (git's, without drivers or textconv; a
// binary file is "Binary files … differ").
func Patch(ctx context.Context, g *hostgit.Git, c Changes, f File) ([]byte, error) {
	args := append([]string{"diff-tree", "-p", "-M", "--no-commit-id", "--no-ext-diff", "--no-textconv", "--no-color", c.Base, c.Head, "--"}, f.paths()...)
	out, err := g.Run(ctx, nil, nil, args...)
	if err != nil {
		return nil, fmt.Errorf("the diff of %s: %w", f.Path, err)
	}
	return out, nil
}
