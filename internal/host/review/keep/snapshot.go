package keep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// initStore makes sandbox name's private object store: a bare repository with no
// templates (no sample hooks) whose objects, in clone mode, start with the host
// repository's (alternates: nothing is copied, nothing of the host's is written).
func (k *Keeper) initStore(ctx context.Context, gitDir, hostGit string) error {
	if _, err := os.Stat(filepath.Join(gitDir, "HEAD")); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(gitDir), 0o700); err != nil {
		return fmt.Errorf("making the review store: %w", err)
	}
	if err := os.MkdirAll(gitDir, 0o700); err != nil {
		return fmt.Errorf("making the review store: %w", err)
	}
	if _, err := k.Git.do(ctx, run{dir: gitDir, args: []string{"init", "--bare", "--quiet", "--template="}}); err != nil {
		return err
	}
	if hostGit != "" {
		objects, err := filepath.Abs(filepath.Join(hostGit, "objects"))
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(gitDir, "objects", "info"), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(gitDir, "objects", "info", "alternates"), []byte(objects+"\n"), 0o600); err != nil {
			return fmt.Errorf("linking the host's objects: %w", err)
		}
	}
	return nil
}

// entry is one file of a snapshot, as git's index lists it.
type entry struct {
	mode, sha, path string
}

// snapshot writes the workspace as it is now — tracked files and untracked ones that
// are not ignored (in clone mode; every file in overlay mode), with their contents in
// the working tree and their modes — as a commit in the private store on top of the
// host's HEAD (clone mode), and returns it. Contents are hashed with --no-filters:
// nothing the repository's .gitattributes names runs.
func (k *Keeper) snapshot(ctx context.Context, r Record) (string, error) {
	var listed []entry
	var err error
	switch {
	case r.HostGit != "":
		listed, err = k.listClone(ctx, r)
	case r.Kind == KindTree:
		listed, err = k.listTree(ctx, r)
	default:
		listed, err = k.listAll(ctx, r)
	}
	if err != nil {
		return "", fmt.Errorf("listing the workspace: %w", err)
	}
	// Symlinks' targets are hashed from files here, with the workspace's files: one
	// hash-object for all (--stdin-paths would follow a link).
	links, err := os.MkdirTemp("", "pi-sbx-links-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(links)
	var files []string // to hash, in order
	var index []entry
	var bound shipBound // a cloud sandbox's start state is shipped: bounded
	for _, e := range listed {
		if strings.ContainsAny(e.path, "\n") {
			continue // --stdin-paths reads lines; git's own add would quote it, we skip it
		}
		full := filepath.Join(r.Root, filepath.FromSlash(e.path))
		fi, err := os.Lstat(full)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // deleted in the working tree
		case err != nil:
			return "", err
		case r.Cloud && e.mode != "160000":
			if err := bound.add(fi.Size()); err != nil {
				return "", err
			}
		}
		switch {
		case e.mode == "160000":
			index = append(index, e) // a submodule: its commit as the index has it
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(full)
			if err != nil {
				return "", err
			}
			tmp := filepath.Join(links, strconv.Itoa(len(files)))
			if err := os.WriteFile(tmp, []byte(target), 0o600); err != nil {
				return "", err
			}
			files = append(files, tmp)
			index = append(index, entry{mode: "120000", path: e.path})
		case fi.Mode().IsRegular():
			mode := "100644"
			if fi.Mode()&0o100 != 0 {
				mode = "100755"
			}
			files = append(files, full) // absolute: git runs in the store, not the workspace
			index = append(index, entry{mode: mode, path: e.path})
		}
	}
	if len(files) > 0 {
		out, err := k.Git.do(ctx, run{dir: r.GitDir, args: []string{"hash-object", "-w", "--no-filters", "--stdin-paths"},
			stdin: strings.NewReader(strings.Join(files, "\n") + "\n")})
		if err != nil {
			return "", err
		}
		shas := strings.Fields(out)
		if len(shas) != len(files) {
			return "", fmt.Errorf("hashing the workspace: %d ids for %d files", len(shas), len(files))
		}
		j := 0
		for i := range index {
			if index[i].sha == "" {
				index[i].sha = shas[j]
				j++
			}
		}
	}
	var parent string
	if r.HostGit != "" {
		parent, _ = k.Git.do(ctx, run{dir: r.HostGit, args: []string{"rev-parse", "-q", "--verify", "HEAD^{commit}"}})
		parent = strings.TrimSpace(parent)
	}
	return k.commit(ctx, r.GitDir, index, parent, "pi-sbx: the workspace when "+r.Sandbox+" started")
}

// commit writes index entries as a tree and a commit on parent ("" for none).
func (k *Keeper) commit(ctx context.Context, gitDir string, index []entry, parent, msg string) (string, error) {
	tmp, err := os.CreateTemp("", "pi-sbx-index-")
	if err != nil {
		return "", err
	}
	tmp.Close()
	os.Remove(tmp.Name()) // git makes it; it must not find an empty file
	defer os.Remove(tmp.Name())
	env := []string{"GIT_INDEX_FILE=" + tmp.Name()}
	var info bytes.Buffer
	for _, e := range index {
		fmt.Fprintf(&info, "%s %s\t%s\x00", e.mode, e.sha, e.path)
	}
	if _, err := k.Git.do(ctx, run{dir: gitDir, args: []string{"update-index", "-z", "--index-info"}, stdin: &info, env: env}); err != nil {
		return "", err
	}
	tree, err := k.Git.do(ctx, run{dir: gitDir, args: []string{"write-tree", "--missing-ok"}, env: env})
	if err != nil {
		return "", err
	}
	args := []string{"commit-tree", "--no-gpg-sign", "-m", msg, strings.TrimSpace(tree)}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	c, err := k.Git.do(ctx, run{dir: gitDir, args: args})
	return strings.TrimSpace(c), err
}

// listClone lists a git workspace: the index's entries (their modes, for submodules)
// and the untracked files that are not ignored, from the host repository (read only).
func (k *Keeper) listClone(ctx context.Context, r Record) ([]entry, error) {
	// -C: from the root, so that no prefix limits what is listed (hostgit runs git in
	// the git directory).
	base := []string{"-C", r.Root, "ls-files", "-z"}
	staged, err := k.Git.do(ctx, run{dir: r.HostGit, workTree: r.Root, args: append(append([]string(nil), base...), "--stage")})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []entry
	for _, rec := range strings.Split(staged, "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 || seen[path] {
			continue // a conflict's other stages
		}
		seen[path] = true
		e := entry{mode: f[0], path: path}
		if f[0] == "160000" {
			e.sha = f[1]
		}
		out = append(out, e)
	}
	others, err := k.Git.do(ctx, run{dir: r.HostGit, workTree: r.Root, args: append(append([]string(nil), base...), "--others", "--exclude-standard")})
	if err != nil {
		return nil, err
	}
	for _, p := range strings.Split(others, "\x00") {
		if p != "" && !strings.HasSuffix(p, "/") && !seen[p] { // "dir/": a repository of its own
			out = append(out, entry{path: p})
		}
	}
	return out, nil
}

// listAll lists every file of a workspace that is not a git repository (nested
// repositories' .git directories aside).
func (k *Keeper) listAll(ctx context.Context, r Record) ([]entry, error) {
	var out []entry
	err := filepath.WalkDir(r.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(r.Root, p)
		if err != nil {
			return err
		}
		out = append(out, entry{path: filepath.ToSlash(rel)})
		return nil
	})
	return out, err
}
