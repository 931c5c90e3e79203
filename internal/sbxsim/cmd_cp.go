//go:build linux

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
	fs, err := parseFlags(c.flagsOf("cp"), args, true)
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
		return notFound(err)
	}
	nsenter, err := lookTool("nsenter")
	if err != nil {
		return err
	}
	inside := []string{nsenter, "--target", strconv.Itoa(sb.Init.Pid), "--mount", "--"}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(c.env.Cwd, p)
	}
	if srcName != "" {
		return copyTar(ctx, inside, path.Dir(src), path.Base(src), nil, abs(dst))
	}
	hostSrc := abs(src)
	return copyTar(ctx, nil, filepath.Dir(hostSrc), filepath.Base(hostSrc), inside, dst)
}

// unpackScript extracts a tar holding one entry named $1 so that it ends up at $2:
// inside $2 when that is an existing directory, else under the name $2.
const unpackScript = `set -e; src=$1; dst=$2
if [ -d "$dst" ]; then exec tar -C "$dst" -xf -; fi
tmp=$(mktemp -d "$(dirname "$dst")/.sbxcp.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
tar -C "$tmp" -xf -; mv "$tmp/$src" "$dst"`

// copyTar copies dir/base to dst with a tar pipe; packIn and unpackIn prefix the side
// that runs inside the sandbox (nil: on the host).
func copyTar(ctx context.Context, packIn []string, dir, base string, unpackIn []string, dst string) error {
	command := func(prefix []string, args ...string) *exec.Cmd {
		if prefix == nil {
			args[0] = mustTool(args[0])
		}
		argv := append(append([]string{}, prefix...), args...)
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = []string{"PATH=" + defaultPath}
		return cmd
	}
	pack := command(packIn, "tar", "-C", dir, "-cf", "-", base)
	unpack := command(unpackIn, "sh", "-c", unpackScript, "sbxcp", base, dst)
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
		return fmt.Errorf("reading %s: %s", path.Join(dir, base), strings.TrimSpace(perr.String()))
	}
	if err2 != nil {
		return fmt.Errorf("writing %s: %s", dst, strings.TrimSpace(uerr.String()))
	}
	return nil
}

// mustTool is lookTool for programs every Debian system has; a missing one yields a
// name that fails clearly when run.
func mustTool(name string) string {
	if p, err := lookTool(name); err == nil {
		return p
	}
	return name
}
