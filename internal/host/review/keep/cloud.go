package keep

import (
	"archive/tar"
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/hostgit"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// A cloud sandbox (sbx --cloud) mounts nothing of the host: review mode ships the start
// state in with `sbx --cloud cp` and builds the workspace at its own path in the VM.
//   - A git workspace (KindClone): the start commit, with the history under it, as a
//     bundle; the VM clones it at the repository's path, on the host's branch, its
//     index the host's HEAD, its files the start state (uncommitted changes
//     included). The work comes back as in clone mode, as a bundle of what is new.
//   - Any other (KindTree): the start state's files as a tar archive, extracted at
//     the workspace's path. The work comes back as an archive of the tree (the same
//     paths left out), which the host commits on the start state.
//
// What is shipped is bounded (MaxShipBytes, MaxShipFiles), and left out: ignored files
// (a git workspace's own rules; in any workspace the .gitignore files found in it) and
// ShipExcludes, the dependency and build directories the sandbox can make again.

// KindTree is a cloud sandbox's workspace that is not a git repository: shipped as a
// tar archive.
const KindTree = "tree"

// Bounds of what a cloud session ships into its sandbox.
const (
	MaxShipBytes = 512 << 20
	MaxShipFiles = 100_000
)

// ShipExcludes are the directories (at any depth) a cloud session never ships from a
// workspace that is not a git repository, nor brings back: dependencies and build
// output, which the sandbox makes itself. A git workspace's own ignore rules say the
// same for it.
var ShipExcludes = []string{
	"node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache", ".pytest_cache",
	".cache", ".gradle", ".next", ".nuxt", "dist", "build", "target", "out", "coverage",
}

// NewCloudRecord describes cloud review sandbox name for workspace: a git workspace sbx
// could clone is shipped as a bundle (KindClone), any other as a tree (KindTree).
func (k *Keeper) NewCloudRecord(name, workspace string) Record {
	r := k.NewRecord(name, workspace)
	r.Cloud = true
	if r.Kind != KindClone {
		r.Kind = KindTree
	}
	return r
}

// clientFor returns the client that reaches r's sandbox: a cloud one's calls carry
// --cloud, a local one's never, whoever asks (a cloud serve's GC, or review and land in
// a terminal).
func (k *Keeper) clientFor(r Record) *sbx.Client {
	if r.Cloud == k.Client.Cloud {
		return k.Client
	}
	c := k.Client.Clone()
	c.Cloud = r.Cloud
	return c
}

// shipPath is where a shipped start state waits in the VM until it is unpacked.
func shipPath(r Record, ext string) string { return "/tmp/pi-sbx-start-" + r.Sandbox + ext }

// cloudCloneScript makes the clone at the repository's path from the bundle: the host's
// branch at the host's HEAD (the start commit's parent), the index that HEAD, the files
// the start state. It runs in the VM.
//
//	$1 the repository's path, $2 the bundle, $3 its ref, $4 the host's branch ("" detached)
const cloudCloneScript = `set -e
` + mkdirRoot + `
cd "$1"
git init -q
git fetch -q --no-tags "$2" "+$3:` + vmBase + `"
rm -f "$2" || :
if p=$(git rev-parse -q --verify ` + vmBase + `^1); then
  if [ -n "$4" ]; then git update-ref "refs/heads/$4" "$p" && git symbolic-ref HEAD "refs/heads/$4"
  else git update-ref --no-deref HEAD "$p"; fi
  git read-tree HEAD
fi
git restore --source=` + vmBase + ` --worktree -- :/
`

// cloudTreeScript unpacks the start state's archive at the workspace's path.
//
//	$1 the workspace's path, $2 the archive
const cloudTreeScript = `set -e
` + mkdirRoot + `
tar -C "$1" -xf "$2"
rm -f "$2" || :
`

// mkdirRoot makes the workspace's path ($1) in the VM, the agent's: where a parent is
// not the agent's to write (/work, /Users), with sudo, which the sandbox's agent user
// has. (The archive copied in may be root's, in a sticky /tmp: removing it is best
// effort.)
const mkdirRoot = `mkdir -p "$1" 2>/dev/null || { sudo -n mkdir -p "$1" && sudo -n chown "$(id -u):$(id -g)" "$1"; }`

// seedCloud ships r's start state (BaseRef) into its cloud sandbox.
func (k *Keeper) seedCloud(ctx context.Context, r Record) error {
	dir, err := os.MkdirTemp("", "pi-sbx-ship-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var local, remote string
	var argv []string
	switch r.Kind {
	case KindClone:
		local, remote = filepath.Join(dir, "start.bundle"), shipPath(r, ".bundle")
		if _, err := k.Git.do(ctx, run{dir: r.GitDir, args: []string{"bundle", "create", "-q", local, BaseRef(r.Sandbox)}}); err != nil {
			return fmt.Errorf("bundling the start state: %w", err)
		}
		branch, _ := k.Git.do(ctx, run{dir: r.HostGit, args: []string{"symbolic-ref", "-q", "--short", "HEAD"}})
		argv = []string{"sh", "-c", cloudCloneScript, "pi-sbx-ship", r.Root, remote, BaseRef(r.Sandbox), strings.TrimSpace(branch)}
	case KindTree:
		local, remote = filepath.Join(dir, "start.tar"), shipPath(r, ".tar")
		f, err := os.Create(local)
		if err != nil {
			return err
		}
		err = k.writeTar(ctx, r.GitDir, BaseRef(r.Sandbox), f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("packing the start state: %w", err)
		}
		argv = []string{"sh", "-c", cloudTreeScript, "pi-sbx-ship", r.Root, remote}
	default:
		return fmt.Errorf("review record of %s: kind %q is not a cloud one", r.Sandbox, r.Kind)
	}
	c := k.clientFor(r)
	if err := c.Cp(ctx, local, r.Sandbox+":"+remote); err != nil {
		return fmt.Errorf("shipping the start state into %s: %w", r.Sandbox, err)
	}
	res, err := c.Exec(ctx, r.Sandbox, argv, sbx.ExecOpts{Workdir: "/", Timeout: 10 * time.Minute})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("exit status %d: %s", res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	if err != nil {
		return fmt.Errorf("unpacking the start state in %s: %w", r.Sandbox, err)
	}
	if len(r.Ship) > 0 {
		return k.seedShip(ctx, r, dir)
	}
	return nil
}

// writeTar writes commit's tree as a tar archive: regular files (mode 0644 or 0755) and
// symbolic links, as git has them, read with one `git cat-file --batch`.
func (k *Keeper) writeTar(ctx context.Context, gitDir, commit string, w io.Writer) error {
	out, err := k.Git.do(ctx, run{dir: gitDir, args: []string{"ls-tree", "-r", "-z", "--full-tree", commit}})
	if err != nil {
		return err
	}
	type file struct{ mode, id, path string }
	var files []file
	for _, rec := range strings.Split(out, "\x00") {
		meta, p, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 || f[1] != "blob" {
			continue // a submodule: not shipped
		}
		files = append(files, file{mode: f[0], id: f[2], path: p})
	}
	tw := tar.NewWriter(w)
	if len(files) > 0 {
		var in strings.Builder
		for _, f := range files {
			in.WriteString(f.id + "\n")
		}
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() {
			g := &hostgit.Git{Environ: k.Git.Environ, Dir: gitDir, MaxOutput: 2 * MaxShipBytes}
			err := g.Stream(ctx, strings.NewReader(in.String()), pw, nil, "cat-file", "--batch")
			pw.CloseWithError(err)
			done <- err
		}()
		br := bufio.NewReader(pr)
		err := func() error {
			for _, f := range files {
				size, err := batchHeader(br, f.id)
				if err != nil {
					return err
				}
				h := &tar.Header{Name: f.path, Mode: 0o644, Size: size, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
				switch f.mode {
				case "100755":
					h.Mode = 0o755
				case "120000":
					target := make([]byte, size)
					if _, err := io.ReadFull(br, target); err != nil {
						return err
					}
					h.Typeflag, h.Linkname, h.Size, h.Mode = tar.TypeSymlink, string(target), 0, 0o777
				}
				if err := tw.WriteHeader(h); err != nil {
					return err
				}
				if h.Typeflag == tar.TypeReg {
					if _, err := io.CopyN(tw, br, size); err != nil {
						return err
					}
				}
				if b, err := br.ReadByte(); err != nil || b != '\n' {
					return errors.New("git cat-file: unexpected output")
				}
			}
			return nil
		}()
		pr.CloseWithError(errors.New("done"))
		if gerr := <-done; err == nil && gerr != nil {
			err = gerr
		}
		if err != nil {
			return err
		}
	}
	return tw.Close()
}

// batchHeader reads cat-file --batch's "ID blob SIZE" line for id.
func batchHeader(br *bufio.Reader, id string) (int64, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return 0, fmt.Errorf("git cat-file: %w", err)
	}
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != id || f[1] != "blob" {
		return 0, fmt.Errorf("git cat-file: unexpected %q", strings.TrimSpace(line))
	}
	return strconv.ParseInt(f[2], 10, 64)
}

// treeCollect archives the workspace in the VM as it is now: its files and symbolic
// links, the ShipExcludes directories and .git ones left out. It runs in the VM.
//
//	$1 the workspace, then the names to leave out
func treeCollectArgv(root string) []string {
	var prune []string
	for _, n := range append([]string{".git"}, ShipExcludes...) {
		if len(prune) > 0 {
			prune = append(prune, "-o")
		}
		prune = append(prune, "-name", n)
	}
	script := `set -e
cd "$1"
shift
find . -type d \( "$@" \) -prune -o \( -type f -o -type l \) -print0 | tar --null -T - -cf -
`
	return append([]string{"sh", "-c", script, "pi-sbx-collect", root}, prune...)
}

// fetchTree reads the cloud sandbox's tree (an archive, bounded) and commits it on the
// start state as the work: every path the archive has, less what the host workspace's
// ignore rules leave out, and no other.
func (k *Keeper) fetchTree(ctx context.Context, r Record) (string, error) {
	arch, err := k.download(ctx, r, "pi-sbx-tree-*.tar", treeCollectArgv(r.Root), sbx.ExecOpts{Workdir: "/"})
	if err != nil {
		return "", err
	}
	defer os.Remove(arch.Name())
	defer arch.Close()
	ignored, err := k.ignoredIn(ctx, r, tar.NewReader(arch))
	if err != nil {
		return "", fmt.Errorf("reading the sandbox's tree: %w", err)
	}
	if _, err := arch.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	head, err := k.importHead(ctx, r, &skipReader{tr: tar.NewReader(arch), skip: ignored}, true)
	if err != nil {
		return "", fmt.Errorf("reading the sandbox's tree: %w", err)
	}
	return head, nil
}

// ignoredIn returns the archive's paths that the ignore rules of the host workspace
// (its .gitignore files, and ShipExcludes in the store's info/exclude) leave out.
func (k *Keeper) ignoredIn(ctx context.Context, r Record, tr *tar.Reader) (map[string]bool, error) {
	var paths strings.Builder
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		// A name that pathspec magic would read (":(…)") is never taken as ignored: it
		// is then shown, and landed only when asked for.
		if p, ok := cleanName(h.Name); ok && !strings.HasPrefix(p, ":") {
			paths.WriteString(p + "\x00")
		}
	}
	if paths.Len() == 0 {
		return nil, nil
	}
	out, err := k.Git.do(ctx, run{dir: r.GitDir, workTree: r.Root, args: []string{"check-ignore", "--no-index", "-z", "--stdin"},
		stdin: strings.NewReader(paths.String()), env: []string{"GIT_LITERAL_PATHSPECS=0"}}) // check-ignore takes no magic, not even literal
	var ee *hostgit.ExitError
	if errors.As(err, &ee) && ee.Code == 1 {
		return nil, nil // none is ignored
	}
	if err != nil {
		return nil, err
	}
	ignored := map[string]bool{}
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			ignored[p] = true
		}
	}
	return ignored, nil
}

// skipReader is a tar reader that leaves out the named paths.
type skipReader struct {
	tr   *tar.Reader
	skip map[string]bool
}

func (s *skipReader) Next() (*tar.Header, error) {
	for {
		h, err := s.tr.Next()
		if err != nil {
			return h, err
		}
		if p, ok := cleanName(h.Name); !ok || !s.skip[p] {
			return h, nil
		}
	}
}

func (s *skipReader) Read(p []byte) (int, error) { return s.tr.Read(p) }

// writeExcludes puts ShipExcludes in a tree store's info/exclude, where listing the
// workspace and checking the archive that comes back both read them.
func writeExcludes(gitDir string) error {
	var b strings.Builder
	b.WriteString("# written by pi-sbx-backend: never shipped to a cloud sandbox\n")
	for _, n := range ShipExcludes {
		b.WriteString(n + "/\n")
	}
	if err := os.MkdirAll(filepath.Join(gitDir, "info"), 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(gitDir, "info", "exclude"), []byte(b.String()), 0o600)
}

// listTree lists a tree workspace: its files that are not ignored (its .gitignore
// files, ShipExcludes), as `git ls-files --others` finds them; nested repositories are
// left out.
func (k *Keeper) listTree(ctx context.Context, r Record) ([]entry, error) {
	if err := writeExcludes(r.GitDir); err != nil {
		return nil, err
	}
	out, err := k.Git.do(ctx, run{dir: r.GitDir, workTree: r.Root, args: []string{"-C", r.Root, "ls-files", "-z", "--others", "--exclude-standard"}})
	if err != nil {
		return nil, err
	}
	var list []entry
	for _, p := range strings.Split(out, "\x00") {
		if p != "" && !strings.HasSuffix(p, "/") {
			list = append(list, entry{path: p})
		}
	}
	return list, nil
}

// shipBound counts what a cloud session would ship and fails past the bounds.
type shipBound struct {
	files int
	bytes int64
}

func (b *shipBound) add(size int64) error {
	b.files++
	b.bytes += size
	switch {
	case b.files > MaxShipFiles:
		return fmt.Errorf("the workspace has more than %d files to ship to a cloud sandbox: "+
			"leave some out with .gitignore, or work in a subdirectory (docs/cloud.md)", MaxShipFiles)
	case b.bytes > MaxShipBytes:
		return fmt.Errorf("the workspace has more than %d MiB to ship to a cloud sandbox: "+
			"leave some out with .gitignore, or work in a subdirectory (docs/cloud.md)", MaxShipBytes>>20)
	}
	return nil
}
