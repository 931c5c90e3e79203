// Package checkpoint takes and restores checkpoints of a work tree as git commits that
// leave the tree's own index, HEAD and branches alone, and names the processes that
// hold files in it. The VM agent uses it for review mode's per-call journal.
package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Journal takes and restores checkpoints of a workspace with git, as commits that leave
// the workspace's own index, HEAD and branches alone: a private index file (kept between
// checkpoints, so that git re-reads only the files whose stat changed) and private refs.
// GitDir is the workspace's own repository (a clone) or a private one outside the
// workspace (any other), made on first use. What a checkpoint holds is what `git add -A`
// takes: tracked files and untracked ones not ignored; never a .git directory.
type Journal struct {
	Root   string // the work tree
	GitDir string // the repository the commits go to
	Index  string // the private index file, outside the work tree
	// Batch, when set, keeps git's batch processes between checkpoints: a checkpoint of
	// named files then never runs git afresh nor looks at the others.
	Batch *Batch
	// Changes, when set, names the paths changed since the last checkpoint: a command's
	// checkpoint looks at those alone (through Batch).
	Changes Changes
}

// Changes names the files of a work tree changed since it was last asked: a Watch
// (inotify) or a Scan (each file's stat).
type Changes interface {
	// changed is the files changed (absolute; those gone too), or all when it cannot
	// tell: the checkpoint then looks at all of the tree.
	changed(ctx context.Context, j Journal, parentTree string) (paths []string, all bool)
	// lose makes the next changed say all: what the last one named was not taken.
	lose()
	// Close ends it.
	Close()
}

// Checkpoint is one checkpoint taken.
type Checkpoint struct {
	Commit  string `json:"commit"`
	Tree    string `json:"tree"`
	Changed bool   `json:"changed"` // false: the tree is parentTree's, nothing was written
}

// gitJournalConfig keeps a checkpoint cheap and inert: the untracked cache in the private
// index, no fsmonitor, automatic gc or fsync, no signing.
var gitJournalConfig = []string{
	"-c", "core.untrackedCache=true", "-c", "core.splitIndex=true", "-c", "core.preloadIndex=false",
	"-c", "core.fsmonitor=false", "-c", "gc.auto=0",
	"-c", "maintenance.auto=false", "-c", "commit.gpgSign=false", "-c", "core.checkStat=minimal",
	"-c", "core.trustctime=false", "-c", "advice.addEmbeddedRepo=false",
	// No fsync: a checkpoint lives in the VM, whose crash loses the work tree with it.
	"-c", "core.fsync=none",
}

func (j Journal) git(ctx context.Context, stdin []byte, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append(append([]string(nil), gitJournalConfig...), args...)...)
	cmd.Dir = j.Root
	cmd.Env = j.env()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// env is the environment of the journal's git commands.
func (j Journal) env() []string {
	return append(os.Environ(), "GIT_DIR="+j.GitDir, "GIT_WORK_TREE="+j.Root, "GIT_INDEX_FILE="+j.Index,
		"GIT_AUTHOR_NAME=pi-sbx", "GIT_AUTHOR_EMAIL=pi-sbx@sandbox", "GIT_COMMITTER_NAME=pi-sbx",
		"GIT_COMMITTER_EMAIL=pi-sbx@sandbox", "GIT_TERMINAL_PROMPT=0")
}

// indexTree is the file that names the tree the private index holds, as the last full
// checkpoint left it: a checkpoint through the Batch moves on without the index, and
// a full one limited to named paths is right only over an index that holds its parent.
func (j Journal) indexTree() string { return j.Index + ".tree" }

// Timeout bounds one checkpoint or restore.
const Timeout = 2 * time.Minute

// prepare makes the private repository and the index's directory when missing, and
// drops the private index's lock when it is older than any checkpoint can last: one
// left by a git that was killed (an agent that died), which would stop every later
// checkpoint. (The host takes checkpoints one at a time.)
func (j Journal) prepare(ctx context.Context) error {
	if fi, err := os.Stat(j.Index + ".lock"); err == nil && time.Since(fi.ModTime()) > Timeout {
		_ = os.Remove(j.Index + ".lock")
	}
	if j.Root == "" || j.GitDir == "" || j.Index == "" || !filepath.IsAbs(j.Index) || !filepath.IsAbs(j.GitDir) {
		return errors.New("journal: root, git dir and index must be absolute paths")
	}
	if err := os.MkdirAll(filepath.Dir(j.Index), 0o700); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if _, err := os.Stat(filepath.Join(j.GitDir, "HEAD")); err == nil {
		return nil
	}
	cmd := exec.CommandContext(ctx, "git", "init", "--bare", "--quiet", "--template=", j.GitDir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("journal: git init: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Take checkpoints the work tree: when its tree differs from parentTree, a commit on
// parent (none when "") is written and ref set to it. A tree equal to parentTree writes
// nothing and returns Changed false. Only, when set, limits what is looked at to those
// paths (absolute, in the work tree): the files a call is known to have written.
func (j Journal) Take(ctx context.Context, parent, parentTree, ref, msg string, only ...string) (Checkpoint, error) {
	if err := j.prepare(ctx); err != nil {
		return Checkpoint{}, err
	}
	// A call that names its files (a write, an edit) is checkpointed with those alone:
	// what a command running beside it changed meanwhile stays with the watch, for that
	// command's own checkpoint.
	if j.Changes != nil && j.Batch != nil && parentTree != "" && len(only) == 0 {
		changed, all := j.Changes.changed(ctx, j, parentTree)
		if !all {
			if len(changed) == 0 {
				return Checkpoint{Commit: parent, Tree: parentTree}, nil // nothing changed
			}
			only = changed
		}
		cp, err := j.take(ctx, parent, parentTree, ref, msg, only)
		if err != nil {
			j.Changes.lose() // the paths it named are taken from it: the next looks at all
		}
		return cp, err
	}
	return j.take(ctx, parent, parentTree, ref, msg, only)
}

// take is Take once the paths to look at are known.
func (j Journal) take(ctx context.Context, parent, parentTree, ref, msg string, only []string) (Checkpoint, error) {
	if j.Batch != nil && len(only) > 0 && parentTree != "" {
		cp, err := j.Batch.take(ctx, j, parent, parentTree, ref, msg, only)
		if err == nil {
			return cp, nil
		}
		if !errors.Is(err, errFull) {
			j.Batch.Close() // a process that failed: started afresh next time
		}
		only = nil // a link, a directory, a nested repository: git's walk of all of it
	}
	spec := []string{":/"}
	held, _ := os.ReadFile(j.indexTree())
	if parentTree != "" && string(held) != parentTree {
		// The index is behind (checkpoints through the Batch moved on without it): it
		// holds the last checkpoint's files again first, or `git add -A` would drop those
		// of them a rule now excludes, which git keeps once they are in the index. A
		// single tree's read keeps the stat data of the files it did not change.
		if _, err := j.git(ctx, nil, "read-tree", "-m", parentTree); err == nil {
			held = []byte(parentTree)
		}
	}
	if len(only) > 0 && parentTree != "" && string(held) == parentTree {
		spec = spec[:0]
		for _, p := range only {
			if !filepath.IsAbs(p) || !under(j.Root, filepath.Clean(p)) {
				spec = []string{":/"} // not one of the tree's: look at all of it
				break
			}
			rel, _ := filepath.Rel(j.Root, filepath.Clean(p))
			spec = append(spec, ":(top,literal)"+filepath.ToSlash(rel))
		}
	}
	add := []string{"add", "-A", "--ignore-errors", "--"}
	_, err := j.git(ctx, nil, append(add, spec...)...)
	if err != nil && !indexingError(err) && spec[0] != ":/" { // a path that matches nothing: look at all of it
		_, err = j.git(ctx, nil, append(add, ":/")...)
	}
	if err != nil && !indexingError(err) {
		return Checkpoint{}, err
	}
	tree, err := j.git(ctx, nil, "write-tree")
	if err != nil {
		return Checkpoint{}, err
	}
	if err := os.WriteFile(j.indexTree(), []byte(tree), 0o600); err != nil {
		return Checkpoint{}, fmt.Errorf("journal: %w", err)
	}
	if parentTree != "" && tree == parentTree {
		return Checkpoint{Commit: parent, Tree: tree}, nil
	}
	args := []string{"commit-tree", "--no-gpg-sign", "-m", msg, tree}
	var commit string
	err = errors.New("no parent")
	if parent != "" {
		commit, err = j.git(ctx, nil, append(args, "-p", parent)...)
	}
	if err != nil { // no parent, or one this repository lacks
		commit, err = j.git(ctx, nil, args...)
	}
	if err != nil {
		return Checkpoint{}, err
	}
	if _, err := j.git(ctx, nil, "update-ref", ref, commit); err != nil {
		return Checkpoint{}, err
	}
	return Checkpoint{Commit: commit, Tree: tree, Changed: true}, nil
}

// indexingError reports whether err is `git add --ignore-errors` saying some files could
// not be added (a nested repository with no commit, a file unreadable to the agent):
// the others were, and the checkpoint holds them. Its own failures exit 128.
func indexingError(err error) bool {
	var x *exec.ExitError
	return errors.As(err, &x) && x.ExitCode() == 1
}

// Restore makes the work tree target's files: those of the private index (the last
// checkpoint's, so take one first) that target lacks are removed, the others written
// as target has them. Files neither has (ignored ones) are left alone.
func (j Journal) Restore(ctx context.Context, target string) error {
	if err := j.prepare(ctx); err != nil {
		return err
	}
	if err := os.Remove(j.indexTree()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("journal: %w", err)
	}
	// The index as the work tree is (the last checkpoint, taken just before): after
	// checkpoints through the Batch it is behind, and read-tree removes only the files
	// it lists.
	if _, err := j.git(ctx, nil, "add", "-A", "--ignore-errors", "--", ":/"); err != nil && !indexingError(err) {
		return err
	}
	if _, err := j.git(ctx, nil, "read-tree", "--reset", "-u", target+"^{tree}"); err != nil {
		return err
	}
	return nil
}

// Holder is a process whose working directory or open files are in a directory.
type Holder struct {
	PID     int      `json:"pid"`
	Command string   `json:"command"`
	Files   []string `json:"files,omitempty"`
}

// Holders lists the processes whose working directory or open files are under root,
// read from /proc: this process and its ancestors (the agent, the exec that runs it)
// and the processes not names (the agent's own git) aside.
func Holders(root string, not ...int) []Holder {
	skip := map[int]bool{}
	for _, pid := range not {
		skip[pid] = true
	}
	for pid := os.Getpid(); pid > 1 && !skip[pid]; pid = parentPID(pid) {
		skip[pid] = true
	}
	ents, _ := os.ReadDir("/proc")
	var out []Holder
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || skip[pid] || pid == os.Getpid() {
			continue
		}
		proc := filepath.Join("/proc", e.Name())
		var files []string
		if cwd, err := os.Readlink(filepath.Join(proc, "cwd")); err == nil && under(root, cwd) {
			files = append(files, cwd)
		}
		fds, _ := os.ReadDir(filepath.Join(proc, "fd"))
		for _, fd := range fds {
			if p, err := os.Readlink(filepath.Join(proc, "fd", fd.Name())); err == nil && under(root, p) {
				files = append(files, p)
			}
		}
		if len(files) == 0 {
			continue
		}
		comm, _ := os.ReadFile(filepath.Join(proc, "comm"))
		sort.Strings(files)
		out = append(out, Holder{PID: pid, Command: strings.TrimSpace(string(comm)), Files: dedupe(files)})
	}
	return out
}

// parentPID reads pid's parent from /proc (0 when unknown).
func parentPID(pid int) int {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	i := bytes.LastIndex(b, []byte(") ")) // the command may hold spaces and parentheses
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

func under(root, p string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
