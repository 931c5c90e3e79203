package keep

import (
	"archive/tar"
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// Overlay mode (a workspace that is not a git repository sbx can clone): sbx mounts the
// workspace read-only at its path, and a copy-on-write layer is mounted over it in the
// VM, its upper layer on the VM's own disk. What the sandbox writes lands there; the
// host reads the upper layer back as an archive and applies it to Base itself.
const (
	overlayDir = "/home/agent/.pi-sbx-review"
	upperDir   = overlayDir + "/upper"
	workDir    = overlayDir + "/work"
)

// mountScript lays the copy-on-write layer over the workspace unless it is there
// already (a re-attached or restarted sandbox keeps its upper layer on disk). Only the
// plain overlayfs: no redirects, metacopy or index, so that the upper layer is files,
// whiteouts and opaque directories. The merged root takes the upper directory's owner
// and mode: they are the workspace's, or the agent could not create a file at its top.
//
//	$1 workspace, $2 upper, $3 work
const mountScript = `set -e
[ "$(stat -f -c %T "$1")" = overlayfs ] && exit 0
mkdir -p "$2" "$3"
chown "$(stat -c %u:%g "$1")" "$2" && chmod "$(stat -c %a "$1")" "$2"
mount -t overlay overlay -o "lowerdir=$1,upperdir=$2,workdir=$3,redirect_dir=off,metacopy=off,index=off,xino=off" "$1"
`

// rootExec runs a fixed command as root with extended privileges (mount, reading the
// upper layer's overlay attributes).
func rootExec(o sbx.ExecOpts) sbx.ExecOpts {
	o.User, o.Privileged = "root", true
	return o
}

func (k *Keeper) mountOverlay(ctx context.Context, r Record) error {
	if strings.ContainsAny(r.Root, ",:\\\n") {
		return fmt.Errorf("review mode cannot lay a copy-on-write layer over %q (a path with , : or \\)", r.Root)
	}
	res, err := k.Client.Exec(ctx, r.Sandbox, []string{"sh", "-c", mountScript, "pi-sbx-overlay", r.Root, upperDir, workDir}, rootExec(sbx.ExecOpts{Workdir: "/"}))
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("exit status %d: %s", res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	if err != nil {
		return fmt.Errorf("laying the copy-on-write layer over %s: %w", r.Root, err)
	}
	return nil
}

// fetchOverlay reads the upper layer (a tar archive, bounded) and writes Base with it
// applied as a new commit: files and symbolic links as they are there, whiteouts as
// deletions, an opaque directory as the deletion of what Base had there first.
func (k *Keeper) fetchOverlay(ctx context.Context, r Record) (string, error) {
	argv := []string{"sh", "-c", `[ -d "$1" ] || exit 0; exec tar -C "$1" --xattrs --xattrs-include='trusted.overlay.*' --numeric-owner -cf - .`, "pi-sbx-upper", upperDir}
	arch, err := k.download(ctx, r, "pi-sbx-upper-*.tar", argv, rootExec(sbx.ExecOpts{Workdir: "/"}))
	if err != nil {
		return "", err
	}
	defer os.Remove(arch.Name())
	defer arch.Close()
	head, err := k.importHead(ctx, r, tar.NewReader(arch), false)
	if err != nil {
		return "", fmt.Errorf("reading the sandbox's upper layer: %w", err)
	}
	return head, nil
}

// importHead commits the archive on the start state (whole: the archive is the whole
// tree, not an overlay's upper layer) with git fast-import, and returns the commit.
func (k *Keeper) importHead(ctx context.Context, r Record, tr archive, whole bool) (string, error) {
	start, err := k.rev(ctx, r.GitDir, StartRef(r.Sandbox))
	if err != nil {
		return "", err
	}
	stream, err := os.CreateTemp("", "pi-sbx-import-")
	if err != nil {
		return "", err
	}
	defer os.Remove(stream.Name())
	defer stream.Close()
	ref := HeadRef(r.Sandbox) + ".new"
	var dotGit []string // what the sandbox wrote in a .git of its own: never part of the work
	if err := importStream(bufio.NewWriter(stream), &dotGitReader{archive: tr, seen: &dotGit}, ref, start, k.now(), whole); err != nil {
		return "", err
	}
	if err := k.saveGitNotes(r, dotGit); err != nil {
		return "", err
	}
	if _, err := stream.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	if _, err := k.Git.do(ctx, run{dir: r.GitDir, args: []string{"fast-import", "--quiet", "--done", "--force"}, stdin: stream}); err != nil {
		return "", err
	}
	head, err := k.rev(ctx, r.GitDir, ref)
	if err != nil {
		return "", err
	}
	_, _ = k.Git.do(ctx, run{dir: r.GitDir, args: []string{"update-ref", "-d", ref}})
	return head, nil
}

// dotGitReader passes an archive on, noting the files and links it holds in a .git
// directory (which importStream leaves out).
type dotGitReader struct {
	archive
	seen *[]string
}

func (d *dotGitReader) Next() (*tar.Header, error) {
	h, err := d.archive.Next()
	if err == nil && (h.Typeflag == tar.TypeReg || h.Typeflag == tar.TypeSymlink) && len(*d.seen) < maxGitNotes {
		p := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if p == ".git" || strings.HasPrefix(p, ".git/") || strings.Contains(p, "/.git/") {
			*d.seen = append(*d.seen, p)
		}
	}
	return h, err
}

// archive is what importStream reads: a tar reader, or one that skips some paths.
type archive interface {
	Next() (*tar.Header, error)
	Read(p []byte) (int, error)
}

// importStream turns an upper layer's archive into a git fast-import stream that
// commits start with the layer applied, on ref (whole: the archive is the whole tree,
// start's files are all replaced). Names that leave the root, and entries that are
// neither files, links, directories nor whiteouts, are dropped.
func importStream(w *bufio.Writer, tr archive, ref, start string, now time.Time, whole bool) error {
	var changes []string
	marks := map[string]string{} // path -> "mode :mark", for hard links
	mark := 0
	blob := func(data io.Reader, n int64) (string, error) {
		mark++
		fmt.Fprintf(w, "blob\nmark :%d\ndata %d\n", mark, n)
		if _, err := io.CopyN(w, data, n); err != nil {
			return "", err
		}
		w.WriteString("\n")
		return fmt.Sprintf(":%d", mark), nil
	}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		p, ok := cleanName(h.Name)
		if !ok {
			continue
		}
		switch h.Typeflag {
		case tar.TypeChar:
			if h.Devmajor == 0 && h.Devminor == 0 { // a whiteout: deleted
				changes = append(changes, "D "+quotePath(p))
			}
		case tar.TypeDir:
			if h.PAXRecords["SCHILY.xattr.trusted.overlay.opaque"] == "y" {
				changes = append(changes, "D "+quotePath(p)) // what follows is all there is
			}
		case tar.TypeReg:
			m, err := blob(tr, h.Size)
			if err != nil {
				return err
			}
			mode := "100644"
			if h.Mode&0o100 != 0 {
				mode = "100755"
			}
			marks[p] = mode + " " + m
			changes = append(changes, "M "+mode+" "+m+" "+quotePath(p))
		case tar.TypeSymlink:
			m, err := blob(strings.NewReader(h.Linkname), int64(len(h.Linkname)))
			if err != nil {
				return err
			}
			changes = append(changes, "M 120000 "+m+" "+quotePath(p))
		case tar.TypeLink:
			if target, ok := cleanName(h.Linkname); ok && marks[target] != "" {
				changes = append(changes, "M "+marks[target]+" "+quotePath(p))
			}
		}
	}
	msg := "pi-sbx: the sandbox's work"
	fmt.Fprintf(w, "commit %s\ncommitter pi-sbx-backend <pi-sbx-backend@localhost> %d +0000\ndata %d\n%s\nfrom %s\n", ref, now.Unix(), len(msg), msg, start)
	if whole {
		w.WriteString("deleteall\n")
	}
	for _, c := range changes {
		w.WriteString(c + "\n")
	}
	w.WriteString("\ndone\n")
	return w.Flush()
}

// cleanName makes an archive name a path relative to the root, refusing one that
// leaves it (or is the root itself).
func cleanName(name string) (string, bool) {
	p := path.Clean(strings.TrimPrefix(name, "./"))
	if p == "." || p == "" || strings.HasPrefix(p, "/") || p == ".." || strings.HasPrefix(p, "../") || strings.ContainsRune(p, 0) {
		return "", false
	}
	if p == ".git" || strings.HasPrefix(p, ".git/") || strings.Contains(p, "/.git/") || strings.HasSuffix(p, "/.git") {
		return "", false // git refuses such paths in a tree
	}
	return p, true
}

// quotePath writes a path as fast-import reads it: as is, or C-style quoted when it
// could be misread (a newline, a leading quote).
func quotePath(p string) string {
	if !strings.ContainsAny(p, "\n\"\\") {
		return p
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\%03o`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
