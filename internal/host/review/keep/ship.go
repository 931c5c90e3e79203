package keep

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// What a cloud session ships is the start state, less what is ignored (cloud.go). The
// user may ask for some of what is left out (PI_SBX_CLOUD_SHIP: Record.Ship): those
// paths' files that the start state lacks go in as a second archive, extracted over the
// workspace after it, within the same bound. They are inputs, as the ignored files a
// local clone is given are: never part of the start commit, and not brought back as
// work (the rules that left them out leave them out of what comes back too).

// CheckShip checks the paths asked to be shipped (cleaned, relative: settings.ParseShip)
// against workspace: each must exist, and be reached through no symbolic link that leads
// out of the workspace (the path itself may be a link: it is shipped as one).
func CheckShip(workspace string, paths []string) error {
	real, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return fmt.Errorf("the workspace %s: %w", workspace, err)
	}
	for _, p := range paths {
		if filepath.IsAbs(p) || p == ".." || strings.HasPrefix(filepath.ToSlash(filepath.Clean(p)), "../") {
			return fmt.Errorf("%s is outside the workspace %s", p, workspace)
		}
		full := filepath.Join(workspace, filepath.FromSlash(p))
		if _, err := os.Lstat(full); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s does not exist in the workspace %s", p, workspace)
		} else if err != nil {
			return err
		}
		if full == filepath.Clean(workspace) {
			continue
		}
		dir, err := filepath.EvalSymlinks(filepath.Dir(full))
		if err != nil {
			return err
		}
		if rel, err := filepath.Rel(real, dir); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return fmt.Errorf("%s is outside the workspace %s (through a symbolic link)", p, workspace)
		}
	}
	return nil
}

// writeShipTar writes, as a tar archive of paths relative to r.Root, the files,
// symbolic links and directories under r.Ship that r's start state (BaseRef) lacks
// (.git directories never), counting them with the start state against the bound. It
// returns how many entries it wrote.
func (k *Keeper) writeShipTar(ctx context.Context, r Record, w io.Writer) (int, error) {
	if err := CheckShip(r.Workspace, r.Ship); err != nil {
		return 0, err
	}
	out, err := k.Git.do(ctx, run{dir: r.GitDir, args: []string{"ls-tree", "-r", "-l", "-z", "--full-tree", BaseRef(r.Sandbox)}})
	if err != nil {
		return 0, err
	}
	var bound shipBound
	have := map[string]bool{}
	for _, rec := range strings.Split(out, "\x00") {
		meta, p, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 || f[1] != "blob" {
			continue
		}
		size, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("git ls-tree: %q: %w", rec, err)
		}
		have[p] = true
		if err := bound.add(size); err != nil {
			return 0, err
		}
	}
	tw := tar.NewWriter(w)
	n := 0
	for _, asked := range r.Ship {
		err := filepath.WalkDir(filepath.Join(r.Workspace, filepath.FromSlash(asked)), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if d.IsDir() && d.Name() == ".git" {
				return filepath.SkipDir
			}
			rel, err := filepath.Rel(r.Root, p)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			if rel == "." || have[rel] || strings.ContainsAny(rel, "\n") {
				return nil
			}
			have[rel] = true // asked twice ("a", "a/b"): once
			fi, err := d.Info()
			if err != nil {
				return err
			}
			h := &tar.Header{Name: rel, Format: tar.FormatPAX, ModTime: time.Unix(fi.ModTime().Unix(), 0)}
			switch {
			case fi.IsDir():
				h.Typeflag, h.Name, h.Mode = tar.TypeDir, rel+"/", int64(fi.Mode().Perm()|0o700)
			case fi.Mode()&fs.ModeSymlink != 0:
				target, err := os.Readlink(p)
				if err != nil {
					return err
				}
				h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, target, 0o777
				if err := bound.add(int64(len(target))); err != nil {
					return err
				}
			case fi.Mode().IsRegular():
				h.Typeflag, h.Size, h.Mode = tar.TypeReg, fi.Size(), 0o644
				if fi.Mode()&0o100 != 0 {
					h.Mode = 0o755
				}
				if err := bound.add(fi.Size()); err != nil {
					return err
				}
			default:
				return nil // a socket, a device: not shipped, as git would not take it
			}
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			n++
			if h.Typeflag != tar.TypeReg {
				return nil
			}
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			if _, err := io.CopyN(tw, f, h.Size); err != nil {
				return fmt.Errorf("%s changed while it was shipped: %w", rel, err)
			}
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("shipping %s: %w", asked, err)
		}
	}
	return n, tw.Close()
}

// seedShip ships the paths r asks for (Record.Ship) into its cloud sandbox, over the
// start state already unpacked there.
func (k *Keeper) seedShip(ctx context.Context, r Record, dir string) error {
	local, remote := filepath.Join(dir, "ship.tar"), shipPath(r, "-ship.tar")
	f, err := os.Create(local)
	if err != nil {
		return err
	}
	n, err := k.writeShipTar(ctx, r, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("the paths PI_SBX_CLOUD_SHIP asks for: %w", err)
	}
	if n == 0 {
		return nil // all in the start state already
	}
	c := k.clientFor(r)
	if err := c.Cp(ctx, local, r.Sandbox+":"+remote); err != nil {
		return fmt.Errorf("shipping the asked paths into %s: %w", r.Sandbox, err)
	}
	res, err := c.Exec(ctx, r.Sandbox, []string{"sh", "-c", cloudTreeScript, "pi-sbx-ship", r.Root, remote}, sbx.ExecOpts{Workdir: "/", Timeout: 10 * time.Minute})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("exit status %d: %s", res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	if err != nil {
		return fmt.Errorf("unpacking the asked paths in %s: %w", r.Sandbox, err)
	}
	return nil
}
