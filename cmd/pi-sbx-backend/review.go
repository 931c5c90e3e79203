package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/review"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/hostgit"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/journal"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/keep"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/session"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/settings"
)

// workSource finds a workspace's review-mode work: the sandbox's current work (fetched
// from it, as shell finds it: DOCKER_SANDBOX, warm re-use) or the kept work of a session
// that has ended.
type workSource interface {
	// Collect returns the work for workspace (absolute).
	Collect(ctx context.Context, workspace string) (review.Changes, error)
	// Discard drops that work: the sandbox's own copy and what the host keeps of it.
	Discard(ctx context.Context, c review.Changes) error
}

// openWork makes the work source from the settings.
type openWork func(st settings.Settings) (workSource, error)

// reviewEnv documents the variables the review commands read.
var reviewEnv = []envDoc{
	{"DOCKER_SANDBOX=NAME", "the sandbox whose work to review (default: the workspace's, running or kept)"},
	{"DOCKER_SANDBOX_REUSE=1", "without DOCKER_SANDBOX: the project's sandbox pi-sbx-<basename>-<hash>"},
	{"PI_SBX_BIN", "the sbx program (default: sbx on PATH, then the usual install places)"},
	{"XDG_STATE_HOME", "where the kept work lives (default ~/.local/state/pi-sbx-backend)"},
}

// reviewCommands are review, land and discard over the work open finds.
func reviewCommands(open openWork) []command {
	return []command{reviewCommand(open), landCommand(open), discardCommand(open), undoCommand(open)}
}

// workFlags are the flags every review command has.
type workFlags struct{ workspace string }

func (w *workFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&w.workspace, "workspace", "", "the host workspace: an existing `DIR` (default: the current directory)")
}

// collect opens the source and collects the work of w's workspace.
func (w workFlags) collect(ctx context.Context, open openWork) (workSource, review.Changes, error) {
	ws, err := absDir(w.workspace)
	if err != nil {
		return nil, review.Changes{}, err
	}
	if fi, err := os.Stat(ws); err != nil {
		return nil, review.Changes{}, usagef("--workspace %s: %v", ws, errors.Unwrap(err))
	} else if !fi.IsDir() {
		return nil, review.Changes{}, usagef("--workspace %s: not a directory", ws)
	}
	st, err := hostSettings()
	if err != nil {
		return nil, review.Changes{}, err
	}
	src, err := open(st)
	if err != nil {
		return nil, review.Changes{}, err
	}
	c, err := src.Collect(ctx, ws)
	return src, c, err
}

// journalSource is a work source with a journal (review mode's checkpoints per call).
type journalSource interface {
	Journal(c review.Changes) ([]journal.Entry, error)
}

// journalOf returns the journal entries of the work c from src.
func journalOf(src workSource, c review.Changes) ([]journal.Entry, error) {
	js, ok := src.(journalSource)
	if !ok {
		return nil, fmt.Errorf("the work of %s has no journal", c.Sandbox)
	}
	return js.Journal(c)
}

// writeCalls prints one line per checkpoint of entries: what each call changed.
func writeCalls(ctx context.Context, w io.Writer, g *hostgit.Git, c review.Changes, entries []journal.Entry) error {
	if len(entries) < 2 {
		fmt.Fprintf(w, "no call of %s has changed the workspace yet\n", c.Sandbox)
		return nil
	}
	calls, err := journal.Calls(ctx, g, c, entries)
	if err != nil {
		return err
	}
	for _, call := range calls {
		fmt.Fprintln(w, journal.Line(call.Entry, call.Files, call.Added, call.Removed))
	}
	return nil
}

func reviewCommand(open openWork) command {
	var w workFlags
	var stat, calls bool
	return command{
		name:     "review",
		synopsis: "[--workspace DIR] [--stat] [--calls | CALL | A..B] [PATH...]",
		summary:  "what a review-mode sandbox changed, the files that would run on the host first",
		help: `Shows what the review-mode sandbox of the workspace changed against the workspace as
it was when the sandbox started: each file added (A), modified (M), deleted (D), renamed
(R) or changed type (T), +x/-x for the executable bit, line counts or "binary", and a
unified diff of each. Files that would run on the host (anything in .git, .envrc,
Makefiles, package.json scripts, a file gaining +x, a symlink out of the workspace, a
file .gitignore hides, …) are listed first in a section of their own, each with why.
PATH limits it to those files or directories (relative to the current directory, or to
the workspace when run from outside it). Nothing is written; the host workspace is not
touched.

The journal: every call that changed the sandbox's workspace (write, edit, bash, !
commands, exec_command, docker tools, undo) is a checkpoint. --calls lists them, one line
each: its number, the client, the client's id for the call, the tool, its arguments'
short form, and the files and lines it changed. CALL (a number) shows what that call
changed, A..B the net change of calls A to B (a path that is a number is written ./N).`,
		env: reviewEnv,
		flags: func(fs *flag.FlagSet) {
			w.define(fs)
			fs.BoolVar(&stat, "stat", false, "the list of files only, without the diffs")
			fs.BoolVar(&calls, "calls", false, "the journal: one line per call that changed the workspace")
		},
		run: func(ctx context.Context, std stdio, args []string) error {
			src, c, err := w.collect(ctx, open)
			if err != nil {
				return err
			}
			g := c.Git(os.Environ())
			if calls || (len(args) > 0 && journal.IsSpec(args[0])) {
				entries, err := journalOf(src, c)
				if err != nil {
					return err
				}
				if calls {
					if len(args) > 0 {
						return usagef("--calls takes no arguments")
					}
					return writeCalls(ctx, std.out, g, c, entries)
				}
				from, to, err := journal.Span(entries, args[0])
				if err != nil {
					return usagef("%v", err)
				}
				c.Base, c.Head, c.BaseRef = from.Commit, to.Commit, ""
				args = args[1:]
			}
			if c, err = review.WorkID(ctx, g, c); err != nil {
				return err
			}
			files, err := review.Files(ctx, g, c)
			if err != nil {
				return err
			}
			paths, err := rootPaths(c.Root, args)
			if err != nil {
				return err
			}
			files = review.Filter(files, paths)
			if stat {
				review.WriteStat(std.out, c, files)
				return nil
			}
			return review.Write(ctx, std.out, g, c, files)
		},
	}
}

// callSpan narrows c to the net change of the calls spec names (A..B, or N) of its
// journal: Base the checkpoint before them, Head the last one's, the land recorded on the
// real Base. A path that a call before them changed, not landed, is refused by name:
// landing it would land more than those calls did.
func callSpan(ctx context.Context, src workSource, g *hostgit.Git, c review.Changes, spec string) (review.Changes, error) {
	entries, err := journalOf(src, c)
	if err != nil {
		return c, err
	}
	from, to, err := journal.Span(entries, spec)
	if err != nil {
		return c, usagef("--calls %v", err)
	}
	span := c
	span.Base, span.Head, span.RecordBase = from.Commit, to.Commit, c.Base
	files, err := review.Files(ctx, g, span)
	if err != nil {
		return c, err
	}
	before := c
	before.Head = from.Commit
	earlier, err := review.Files(ctx, g, before)
	if err != nil {
		return c, err
	}
	touched := map[string]bool{}
	for _, f := range earlier {
		touched[f.Path] = true
		if f.OldPath != "" {
			touched[f.OldPath] = true
		}
	}
	var refused []review.Refusal
	for _, f := range files {
		for _, p := range []string{f.Path, f.OldPath} {
			if p != "" && touched[p] {
				refused = append(refused, review.Refusal{Path: p, Why: "changed by a call before " + spec + " that is not landed (land those calls first)"})
			}
		}
	}
	if len(refused) > 0 {
		return c, &review.RefusedError{Refusals: refused}
	}
	return span, nil
}

func landCommand(open openWork) command {
	var w workFlags
	var all bool
	var head, calls string
	var hunks hunkFlag
	return command{
		name:     "land",
		synopsis: "[--workspace DIR] [--head ID] [--calls A..B] (--all | PATH... | PATH --hunk N[,N...])",
		summary:  "write chosen changes of a review-mode sandbox into the host workspace",
		help: `Writes the named files (or directories: every change beneath them), or with --all every
change except the files that would run on the host, into the host workspace. Those
flagged files land only when named (with --all too: land --all Makefile). Each file is
written by pi-sbx-backend itself from the sandbox's content (no git checkout, no hook,
filter or driver runs), to a temporary file renamed over it, and printed as it is
written. If any path changed on the host since the sandbox started, nothing is written
and each such path is named (exit 1). --head ID (the work a review named: "work ID")
refuses, writing nothing, if the sandbox's work has changed since that review. What
landed is recorded, so the next review shows only what is left. --calls A..B (or N)
lands the net change of those calls of the journal (review --calls) instead of all the
work: every file they changed but the flagged ones (name those), or the named PATHs
among them; a file a call before A changed, not landed, is refused by name.

PATH --hunk N[,N...] (also after PATH; ranges N-M; --hunk may be repeated) lands only
those hunks of that one file, numbered as review shows them ("@@ ... @@ [hunk N]"): the
host's file becomes the file as it was with only those hunks applied, refused as above
if the host's file changed since the start. The next review shows the file's other
hunks, numbered afresh. Only a text file modified in place has hunks: a new, deleted,
renamed, binary or symlinked file, or one whose executable bit changed, lands whole.`,
		env: reviewEnv,
		flags: func(fs *flag.FlagSet) {
			w.define(fs)
			fs.BoolVar(&all, "all", false, "every change except the flagged ones (which must be named)")
			fs.StringVar(&head, "head", "", "land only if the work is still `ID`, the one a review showed")
			fs.StringVar(&calls, "calls", "", "land the net change of the journal's calls `A..B` (or one call N)")
			fs.Var(&hunks, "hunk", "land only hunks `N[,N...]` of the one file PATH names (as review numbers them)")
		},
		run: func(ctx context.Context, std stdio, args []string) error {
			// land PATH --hunk N: the flag package stops at PATH, so --hunk is looked for
			// after it too.
			args, err := hunks.pull(args)
			if err != nil {
				return err
			}
			chosen, err := hunks.numbers()
			if err != nil {
				return err
			}
			if chosen != nil && (all || len(args) != 1) {
				return usagef("--hunk lands hunks of one file: name exactly that PATH, without --all")
			}
			if calls != "" && len(args) == 0 {
				all = true
			}
			if calls != "" && head != "" {
				return usagef("--calls and --head exclude each other")
			}
			if !all && len(args) == 0 {
				return usagef("name the paths to land, or --all")
			}
			src, c, err := w.collect(ctx, open)
			if err != nil {
				return err
			}
			if calls != "" {
				if c, err = callSpan(ctx, src, c.Git(os.Environ()), c, calls); err != nil {
					return err
				}
			}
			paths, err := rootPaths(c.Root, args)
			if err != nil {
				return err
			}
			landed, err := review.Land(ctx, c.Git(os.Environ()), c, review.Selection{All: all, Paths: paths, Head: head, Hunks: chosen}, std.out)
			if err != nil {
				return err
			}
			if chosen != nil {
				fmt.Fprintf(std.out, "landed %s of %s; %d of its hunks left\n", hunkWords(chosen), review.Quote(paths[0]), landed.HunksLeft)
			}
			fmt.Fprintf(std.out, "landed %d change(s) from %s; %d left\n", len(landed.Files), c.Sandbox, landed.Left)
			if len(landed.Held) > 0 {
				var names []string
				for _, f := range landed.Held {
					names = append(names, review.Quote(f.Path))
				}
				fmt.Fprintf(std.out, "not landed, they would run on the host (name each to land it): %s\n", strings.Join(names, ", "))
			}
			return nil
		},
	}
}

func discardCommand(open openWork) command {
	var w workFlags
	return command{
		name:     "discard",
		synopsis: "[--workspace DIR]",
		summary:  "drop the work of a review-mode sandbox, landing nothing",
		help: `Drops the review-mode sandbox's work that has not landed: what the host keeps of it,
and the sandbox's own copy, reset to the workspace as it was at the start (or landed
since). The host workspace is not touched.`,
		env:   reviewEnv,
		flags: func(fs *flag.FlagSet) { w.define(fs) },
		run: func(ctx context.Context, std stdio, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			src, c, err := w.collect(ctx, open)
			if err != nil {
				return err
			}
			files, err := review.Files(ctx, c.Git(os.Environ()), c)
			if err != nil {
				return err
			}
			if err := src.Discard(ctx, c); err != nil {
				return err
			}
			fmt.Fprintf(std.out, "discarded %d change(s) of %s\n", len(files), c.Sandbox)
			return nil
		},
	}
}

// rootPaths turns PATH arguments into slash paths relative to the workspace root: an
// absolute one as it is, a relative one from the current directory when that is inside
// the workspace, else from the root (land --workspace ~/p src/a.go, run from elsewhere).
// One outside the workspace is a usage error.
func rootPaths(root string, args []string) ([]string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("finding the current directory: %w", err)
	}
	if !inside(root, wd) {
		wd = root
	}
	var out []string
	for _, a := range args {
		p := a
		if !filepath.IsAbs(p) {
			p = filepath.Join(wd, p)
		}
		if !inside(root, p) {
			return nil, usagef("%s is outside the workspace %s", a, root)
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
	}
	return out, nil
}

// inside reports whether p is root or beneath it.
func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// sessionWork is the work of serve's session (its sandbox, on its workspace), for
// pi_sbx_review: the source is opened as if DOCKER_SANDBOX named that sandbox.
func sessionWork(open openWork, st settings.Settings, workspace, sandbox string) session.Collector {
	st.Sandbox = sandbox
	return func(ctx context.Context) (review.Changes, error) {
		src, err := open(st)
		if err != nil {
			return review.Changes{}, err
		}
		return src.Collect(ctx, workspace)
	}
}

// openKeptWork is the work keep finds (keep.OpenWork).
func openKeptWork(st settings.Settings) (workSource, error) {
	w, err := keep.OpenWork(st)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// hunkFlag is land's --hunk: lists of hunk numbers, from every --hunk given.
type hunkFlag struct{ lists []string }

func (h *hunkFlag) String() string { return strings.Join(h.lists, ",") }

// Set takes one --hunk's list (checked whole later, with the others).
func (h *hunkFlag) Set(v string) error {
	h.lists = append(h.lists, v)
	return nil
}

// pull takes the --hunk flags that follow the paths out of args (the flag package stops
// at the first path); after "--" every word is a path.
func (h *hunkFlag) pull(args []string) ([]string, error) {
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(rest, args[i+1:]...), nil
		case a == "--hunk" || a == "-hunk":
			if i+1 >= len(args) {
				return nil, usagef("--hunk wants a list of hunk numbers, as review numbers them")
			}
			i++
			h.lists = append(h.lists, args[i])
		case strings.HasPrefix(a, "--hunk=") || strings.HasPrefix(a, "-hunk="):
			h.lists = append(h.lists, a[strings.IndexByte(a, '=')+1:])
		default:
			rest = append(rest, a)
		}
	}
	return rest, nil
}

// numbers is every --hunk's numbers, checked (nil without --hunk).
func (h *hunkFlag) numbers() ([]int, error) {
	if len(h.lists) == 0 {
		return nil, nil
	}
	n, err := review.ParseHunkList(strings.Join(h.lists, ","))
	if err != nil {
		return nil, usagef("--hunk: %v", err)
	}
	return n, nil
}

// hunkWords is "hunk 2" or "hunks 1, 3".
func hunkWords(n []int) string {
	words := make([]string, len(n))
	for i, x := range n {
		words[i] = strconv.Itoa(x)
	}
	if len(n) == 1 {
		return "hunk " + words[0]
	}
	return "hunks " + strings.Join(words, ", ")
}
