package keep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/filelock"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/hostgit"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// DefaultMaxFetch bounds what one collect may bring from a sandbox (its replies are
// untrusted): a bundle or an archive larger than this fails the collect.
const DefaultMaxFetch = 1 << 30

// Keeper does review mode's host work: it writes the start state, brings it into the
// sandbox, and collects the sandbox's work.
type Keeper struct {
	Git    *Git
	Client *sbx.Client
	Store  Store
	// MaxFetch bounds one collect's download (DefaultMaxFetch when zero).
	MaxFetch int64
	// Now is the clock of the records (time.Now when nil).
	Now func() time.Time
}

// Plan is how review mode works for a workspace: KindClone with the git root when the
// workspace is inside a git repository sbx can clone (a .git directory, not a linked
// worktree's .git file), else KindOverlay with the workspace as root.
func Plan(workspace string) (kind, root string) {
	for dir := workspace; ; dir = filepath.Dir(dir) {
		fi, err := os.Lstat(filepath.Join(dir, ".git"))
		if err == nil {
			if fi.IsDir() {
				return KindClone, dir
			}
			return KindOverlay, workspace
		}
		if dir == filepath.Dir(dir) {
			return KindOverlay, workspace
		}
	}
}

// NewRecord describes review sandbox name for workspace.
func (k *Keeper) NewRecord(name, workspace string) Record {
	kind, root := Plan(workspace)
	r := Record{Sandbox: name, Kind: kind, Workspace: workspace, Root: root, GitDir: k.Store.GitDir(name), Created: k.now()}
	if kind == KindClone {
		r.HostGit = filepath.Join(root, ".git")
	}
	return r
}

func (k *Keeper) now() time.Time {
	if k.Now != nil {
		return k.Now()
	}
	return time.Now()
}

// Begin records the session and writes its start state (Base) in the private store:
// called once the sandbox exists, before the agent sees it.
func (k *Keeper) Begin(ctx context.Context, r Record) error {
	if err := k.initStore(ctx, r.GitDir, r.HostGit); err != nil {
		return err
	}
	if err := k.Store.Save(r); err != nil {
		return err
	}
	if err := k.forgetJournal(ctx, r); err != nil { // a sandbox of the same name before
		return err
	}
	base, err := k.snapshot(ctx, r)
	if err != nil {
		return fmt.Errorf("writing the start state: %w", err)
	}
	for _, ref := range []string{StartRef(r.Sandbox), BaseRef(r.Sandbox)} {
		if _, err := k.Git.do(ctx, run{dir: r.GitDir, args: []string{"update-ref", ref, base}}); err != nil {
			return err
		}
	}
	return nil
}

// seedScript brings the start state into the clone: the bundle on stdin is fetched as
// refs/pi-sbx/base and its files written over the working tree (the index stays the
// host HEAD's, so uncommitted host changes show as uncommitted in the clone too); the
// ignored files (build output, node_modules, .env) are copied from the read-only source,
// and its empty directories made, so that the agent's tools see what they would see in
// the host workspace. All of it
// runs in the VM.
//
//	$1 the clone, $2 the bundle's ref
const seedScript = `set -e
cd "$1"
b=$(mktemp)
trap 'rm -f "$b"' EXIT
cat >"$b"
git fetch -q --no-tags "$b" "+$2:` + vmBase + `"
git restore --source=` + vmBase + ` --worktree -- :/
git -C ` + cloneSource + ` ls-files -z --others --ignored --exclude-standard | tar -C ` + cloneSource + ` --null -T - -cf - | tar -xf -
(cd ` + cloneSource + ` && find . -path ./.git -prune -o -type d -empty -print0) | xargs -0 -r mkdir -p
` + gitMetaScript

// cloneSource is where sbx mounts the host repository in clone mode.
const cloneSource = "/run/sandbox/source"

// Seed brings the start state into a new clone-mode sandbox.
func (k *Keeper) Seed(ctx context.Context, r Record) error {
	if r.Cloud {
		return k.seedCloud(ctx, r)
	}
	if r.Kind != KindClone {
		return k.mountOverlay(ctx, r)
	}
	dir, err := os.MkdirTemp("", "pi-sbx-base-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "base.bundle")
	args := []string{"bundle", "create", "-q", path, BaseRef(r.Sandbox)}
	if head, _ := k.Git.do(ctx, run{dir: r.HostGit, args: []string{"rev-parse", "-q", "--verify", "HEAD^{commit}"}}); strings.TrimSpace(head) != "" {
		args = append(args, "^"+strings.TrimSpace(head)) // the clone has the host's history
	}
	if _, err := k.Git.do(ctx, run{dir: r.GitDir, args: args}); err != nil {
		return fmt.Errorf("bundling the start state: %w", err)
	}
	bundle, err := os.Open(path) // git wrote it through a lock file: a new file
	if err != nil {
		return err
	}
	defer bundle.Close()
	res, err := k.clientFor(r).Exec(ctx, r.Sandbox, []string{"sh", "-c", seedScript, "pi-sbx-seed", r.Root, BaseRef(r.Sandbox)},
		sbx.ExecOpts{Interactive: true, Stdin: bundle, Workdir: r.Root})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("exit status %d: %s", res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	if err != nil {
		return fmt.Errorf("bringing the start state into %s: %w", r.Sandbox, err)
	}
	return nil
}

// journalBundle writes a bundle of the journal's checkpoints (refs/pi-sbx/journal/*) in
// repository $1 to stdout, less what the host has ($2, the last checkpoint fetched, when
// the VM has it too, and in a clone the start state); nothing when there is none.
const journalBundle = `j=$1 have=$2
set -- --glob=refs/pi-sbx/journal/*
[ -n "$have" ] && git --git-dir="$j" cat-file -e "$have^{commit}" 2>/dev/null && set -- "$@" "^$have"
git --git-dir="$j" rev-parse -q --verify ` + vmBase + ` >/dev/null && set -- "$@" ^` + vmBase + `
git --git-dir="$j" bundle create -q - "$@" 2>/dev/null || true
`

// gitMetaScript records what of the clone's own .git could run on the host had it
// been written there — config, info/attributes, hooks/* — as a commit of a flat tree
// (hooks/x named hooks:x) on refs/pi-sbx/gitmeta, and the first one also on
// refs/pi-sbx/gitmeta-start. Land never writes any of it; review shows what changed.
// A name it cannot carry (a tab or a newline) is left out; a failure skips it.
const gitMetaScript = `pi_sbx_gitmeta() {
gm=$( (cd .git && for f in config info/attributes hooks/*; do
  [ -f "$f" ] && [ ! -L "$f" ] || continue
  case "$f" in *"	"*|*"
"*) continue;; esac
  m=100644; [ -x "$f" ] && m=100755
  printf '%s blob %s\t%s\n' $m "$(git hash-object -w -- "$f")" "$(printf %s "$f" | tr / :)"
done) | git mktree) || return
gc=$(GIT_AUTHOR_NAME=pi-sbx GIT_AUTHOR_EMAIL=pi-sbx@sandbox GIT_COMMITTER_NAME=pi-sbx GIT_COMMITTER_EMAIL=pi-sbx@sandbox \
  git commit-tree --no-gpg-sign -m "pi-sbx: the clone's .git" "$gm") || return
git update-ref ` + vmGitMeta + ` "$gc"
git rev-parse -q --verify ` + vmGitMeta + `-start >/dev/null || git update-ref ` + vmGitMeta + `-start "$gc"
}
pi_sbx_gitmeta || true
`

// collectScript snapshots the clone's working tree (tracked files and untracked ones
// not ignored, committed or not) as refs/pi-sbx/head on the clone's HEAD, without
// touching the agent's index, and writes a bundle of it and the clone's branches, less
// what the start state already has, to stdout.
//
//	$1 the clone
const collectScript = `set -e
if [ "$2" = journal ]; then shift 2; ` + journalBundle + `exit 0; fi
cd "$1"
i=$(mktemp)
trap 'rm -f "$i"' EXIT
if [ -f .git/index ]; then cp .git/index "$i"; else rm -f "$i"; fi
export GIT_INDEX_FILE="$i" GIT_AUTHOR_NAME=pi-sbx GIT_AUTHOR_EMAIL=pi-sbx@sandbox GIT_COMMITTER_NAME=pi-sbx GIT_COMMITTER_EMAIL=pi-sbx@sandbox
git add -A
t=$(git write-tree)
if p=$(git rev-parse -q --verify HEAD^{commit}); then c=$(git commit-tree --no-gpg-sign -m "pi-sbx: the sandbox's work" -p "$p" "$t")
else c=$(git commit-tree --no-gpg-sign -m "pi-sbx: the sandbox's work" "$t"); fi
git update-ref ` + vmHead + ` "$c"
` + gitMetaScript + `set -- ` + vmHead + ` --branches ^` + vmBase + `
for m in ` + vmGitMeta + ` ` + vmGitMeta + `-start; do git rev-parse -q --verify $m >/dev/null && set -- "$@" $m; done
git bundle create -q - "$@" 2>/dev/null
`

// ErrNoWork: neither a sandbox nor kept work for the workspace.
var ErrNoWork = errors.New("no review sandbox and no kept work for this workspace")

// Collect fetches sandbox r.Sandbox's current work (an exec starts a stopped sandbox)
// into the private store as HeadRef, and returns Base and Head. A sandbox that is gone
// leaves its kept refs, which are returned as they are.
//
// Collects of one sandbox are serialized across processes (pi's status refresh and a
// `review` in a terminal at once): both would snapshot into the clone's one ref and
// fetch into the store's one temporary ref, and one of them would fail.
func (k *Keeper) Collect(ctx context.Context, r Record) (review.Changes, error) {
	ch := review.Changes{GitDir: r.GitDir, Root: r.Root, Sandbox: r.Sandbox, BaseRef: BaseRef(r.Sandbox)}
	unlock, err := collectLock(ctx, r)
	if err != nil {
		return ch, err
	}
	defer unlock()
	_, err = k.clientFor(r).Lookup(ctx, r.Sandbox)
	switch {
	case errors.Is(err, sbx.ErrMissing):
		return k.kept(ctx, r, ch)
	case err != nil:
		return ch, fmt.Errorf("looking up sandbox %s: %w", r.Sandbox, err)
	}
	head, err := k.fetch(ctx, r)
	if err != nil {
		return ch, fmt.Errorf("collecting the work of %s: %w", r.Sandbox, err)
	}
	if _, err := k.Git.do(ctx, run{dir: r.GitDir, args: []string{"update-ref", HeadRef(r.Sandbox), head}}); err != nil {
		return ch, err
	}
	if err := k.fetchJournal(ctx, r); err != nil {
		return ch, fmt.Errorf("collecting the journal of %s: %w", r.Sandbox, err)
	}
	return k.kept(ctx, r, ch)
}

// collectLock takes the lock of r's collects, a file beside its private store.
func collectLock(ctx context.Context, r Record) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(r.GitDir), 0o700); err != nil {
		return nil, fmt.Errorf("collecting the work of %s: %w", r.Sandbox, err)
	}
	unlock, err = filelock.Lock(ctx, strings.TrimSuffix(r.GitDir, ".git")+".collect.lock")
	if err != nil {
		return nil, fmt.Errorf("collecting the work of %s: %w", r.Sandbox, err)
	}
	return unlock, nil
}

// kept returns the refs kept for r.
func (k *Keeper) kept(ctx context.Context, r Record, ch review.Changes) (review.Changes, error) {
	base, err := k.rev(ctx, r.GitDir, BaseRef(r.Sandbox))
	if err != nil {
		return ch, fmt.Errorf("%w (%s: %v)", ErrNoWork, r.Sandbox, err)
	}
	head, err := k.rev(ctx, r.GitDir, HeadRef(r.Sandbox))
	if err != nil {
		head = base // nothing fetched yet, and no sandbox left to fetch from
	}
	ch.Base, ch.Head = base, head
	ch.GitNotes = k.gitNotes(ctx, r)
	return ch, nil
}

func (k *Keeper) rev(ctx context.Context, gitDir, ref string) (string, error) {
	out, err := k.Git.do(ctx, run{dir: gitDir, args: []string{"rev-parse", "-q", "--verify", ref + "^{commit}"}})
	return strings.TrimSpace(out), err
}

// fetch brings the sandbox's work to the host and returns Head's commit id.
func (k *Keeper) fetch(ctx context.Context, r Record) (string, error) {
	switch r.Kind {
	case KindOverlay:
		return k.fetchOverlay(ctx, r)
	case KindTree:
		return k.fetchTree(ctx, r)
	}
	bundle, err := k.download(ctx, r, "pi-sbx-work-*.bundle", []string{"sh", "-c", collectScript, "pi-sbx-collect", r.Root},
		sbx.ExecOpts{Workdir: r.Root})
	if err != nil {
		return "", err
	}
	defer os.Remove(bundle.Name())
	if err := bundle.Close(); err != nil {
		return "", err
	}
	// Only these refspecs: whatever else the bundle names is not taken.
	if _, err := k.Git.do(ctx, run{dir: r.GitDir, args: []string{"fetch", "-q", "--no-tags", "--no-write-fetch-head",
		"--no-recurse-submodules", bundle.Name(), "+" + vmHead + ":" + HeadRef(r.Sandbox) + ".new", "+refs/heads/*:" + BranchesRef(r.Sandbox) + "*",
		"+" + vmGitMeta + "*:" + refPrefix + r.Sandbox + "/gitmeta*"}}); err != nil {
		return "", fmt.Errorf("fetching the sandbox's bundle: %w", err)
	}
	head, err := k.rev(ctx, r.GitDir, HeadRef(r.Sandbox)+".new")
	if err != nil {
		return "", err
	}
	_, _ = k.Git.do(ctx, run{dir: r.GitDir, args: []string{"update-ref", "-d", HeadRef(r.Sandbox) + ".new"}})
	return head, nil
}

// download runs argv in sandbox r and returns its stdout in a new temporary file (at
// offset 0; the caller removes it), failing when the sandbox sends more than maxFetch
// bytes: its replies are untrusted.
func (k *Keeper) download(ctx context.Context, r Record, pattern string, argv []string, o sbx.ExecOpts) (*os.File, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*os.File, error) {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	w := hostgit.NewCapWriter(f, k.maxFetch())
	o.Stdout, o.Timeout = w, 10*time.Minute
	res, err := k.clientFor(r).Exec(ctx, r.Sandbox, argv, o)
	switch {
	case w.Over():
		return fail(fmt.Errorf("the sandbox sent more than %d bytes", k.maxFetch()))
	case err != nil:
		return fail(err)
	case res.ExitCode != 0:
		return fail(fmt.Errorf("exit status %d: %s", res.ExitCode, strings.TrimSpace(res.Stderr)))
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fail(err)
	}
	return f, nil
}

func (k *Keeper) maxFetch() int64 {
	if k.MaxFetch > 0 {
		return k.MaxFetch
	}
	return DefaultMaxFetch
}

// Unlanded lists the paths whose content in ch.Head differs from ch.Base (land moves
// Base forward as it lands): what would be lost with the sandbox and its refs.
func (k *Keeper) Unlanded(ctx context.Context, ch review.Changes) ([]string, error) {
	if ch.Base == ch.Head {
		return nil, nil
	}
	out, err := k.Git.do(ctx, run{dir: ch.GitDir, args: []string{"diff-tree", "-r", "-z", "--name-only", "--no-renames", "--no-ext-diff", "--no-textconv", ch.Base, ch.Head}})
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, nil
}
