package sbxsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// splitCpArg splits SANDBOX:/abs/path; a host path (no colon before the first slash)
// gives an empty name.
func splitCpArg(a string) (name, p string) {
	i := strings.IndexByte(a, ':')
	if i <= 0 || strings.Contains(a[:i], "/") {
		return "", a
	}
	return a[:i], a[i+1:]
}

// cp copies a file or directory between the host and a sandbox, in the spirit of
// docker cp: a destination that is an existing directory receives the source under its
// own name, any other destination is the new name. The sandbox side is read and written
// by tar run inside the sandbox's mount namespace, so its symlinks resolve there.
func (c *cli) cp(ctx context.Context, args []string) error {
	fs, err := parseFlags([]flagSpec{{long: "follow-link", short: "L"}}, args, true)
	if err != nil {
		return err
	}
	if len(fs.args) != 2 {
		return errors.New("\"sbx cp\" requires exactly 2 arguments")
	}
	srcName, src := splitCpArg(fs.args[0])
	dstName, dst := splitCpArg(fs.args[1])
	switch {
	case srcName != "" && dstName != "":
		return errors.New("copying between sandboxes is not supported")
	case srcName == "" && dstName == "":
		return errors.New("one of the source and destination must be SANDBOX:/path")
	}
	name, inPath := srcName, src
	if dstName != "" {
		name, inPath = dstName, dst
	}
	if !path.IsAbs(inPath) {
		return fmt.Errorf("sandbox path %q must be absolute", inPath)
	}
	sb, err := c.m.ensureRunning(ctx, name)
	if err != nil {
		return err
	}
	target := strconv.Itoa(sb.Init.Pid)
	inside := func(args ...string) *exec.Cmd {
		nsenter, _ := lookTool("nsenter")
		cmd := exec.CommandContext(ctx, nsenter, append([]string{"--target", target, "--mount", "--"}, args...)...)
		cmd.Env = []string{"PATH=" + defaultPath}
		return cmd
	}
	if srcName != "" {
		dstAbs, err := filepath.Abs(dst)
		if err != nil {
			return err
		}
		return copyTar(inside("tar", "-C", path.Dir(src), "-cf", "-", path.Base(src)), path.Base(src), hostUnpacker(ctx, dstAbs))
	}
	srcAbs, err := filepath.Abs(src)
	if err != nil {
		return err
	}
	pack := exec.CommandContext(ctx, "tar", "-C", filepath.Dir(srcAbs), "-cf", "-", filepath.Base(srcAbs))
	// Inside: extract into a fresh directory next to the destination, then move into place.
	script := `set -e; src=$1; dst=$2
if [ -d "$dst" ]; then tar -C "$dst" -xf -; exit 0; fi
tmp=$(mktemp -d "$(dirname "$dst")/.sbxcp.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
tar -C "$tmp" -xf -; mv "$tmp/$src" "$dst"`
	return copyTar(pack, filepath.Base(srcAbs), inside("sh", "-c", script, "sbxcp", filepath.Base(srcAbs), dst))
}

// hostUnpacker extracts a tar of one entry named base to dst on the host.
func hostUnpacker(ctx context.Context, dst string) *exec.Cmd {
	script := `set -e; src=$1; dst=$2
if [ -d "$dst" ]; then exec tar -C "$dst" -xf -; fi
tmp=$(mktemp -d "$(dirname "$dst")/.sbxcp.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
tar -C "$tmp" -xf -; mv "$tmp/$src" "$dst"`
	cmd := exec.CommandContext(ctx, "sh", "-c", script, "sbxcp", "", dst)
	cmd.Env = []string{"PATH=" + defaultPath}
	return cmd
}

// copyTar pipes pack's stdout into unpack's stdin; base names the single entry.
func copyTar(pack *exec.Cmd, base string, unpack *exec.Cmd) error {
	if len(unpack.Args) >= 5 && unpack.Args[len(unpack.Args)-2] == "" {
		unpack.Args[len(unpack.Args)-2] = base
	}
	r, w := io.Pipe()
	pack.Stdout, unpack.Stdin = w, r
	var perr, uerr strings.Builder
	pack.Stderr, unpack.Stderr = &perr, &uerr
	if err := unpack.Start(); err != nil {
		return err
	}
	err1 := pack.Run()
	w.CloseWithError(err1)
	err2 := unpack.Wait()
	if err1 != nil {
		return fmt.Errorf("reading source: %s", strings.TrimSpace(perr.String()))
	}
	if err2 != nil {
		return fmt.Errorf("writing destination: %s", strings.TrimSpace(uerr.String()))
	}
	return nil
}
