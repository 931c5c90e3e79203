package deploy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// ErrRefused marks an argument refused before anything ran.
var ErrRefused = errors.New("refused")

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

// safeArg refuses values that could be read as a flag or break a line: empty, starting
// with '-', or holding CR, LF, NUL or another control character.
func safeArg(field, v string) error {
	if v == "" {
		return refuse("%s is empty", field)
	}
	if strings.HasPrefix(v, "-") {
		return refuse("%s %q starts with '-' (option injection)", field, v)
	}
	return noControl(field, v)
}

// noControl refuses control characters (CR/LF/NUL and friends) in any value.
func noControl(field, v string) error {
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return refuse("%s %q contains a control character", field, v)
		}
	}
	return nil
}

// Confine maps p (relative to the workspace, or absolute) to an absolute path inside the
// workspace, which is also its path in the sandbox. It refuses '..' escapes, absolute
// paths elsewhere, symlinks (at any depth of the existing part) resolving outside the
// real workspace, and option-looking or control-character values.
func Confine(workspace, p string) (string, error) {
	if err := safeArg("path", p); err != nil {
		return "", err
	}
	ws := filepath.Clean(workspace)
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(ws, abs)
	}
	abs = filepath.Clean(abs)
	if !within(ws, abs) {
		return "", refuse("%q is outside the workspace", p)
	}
	realWS, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return "", fmt.Errorf("resolving the workspace: %w", err)
	}
	real, err := realpathWithin(abs)
	if err != nil {
		return "", refuse("%q cannot be resolved inside the workspace (a dangling or looping link)", p)
	}
	if !within(realWS, real) {
		return "", refuse("%q resolves outside the workspace", p)
	}
	// The resolved path: a symlink swapped in later cannot redirect what was checked.
	rel, err := filepath.Rel(realWS, real)
	if err != nil {
		return "", refuse("%q: %v", p, err)
	}
	return filepath.Join(ws, rel), nil
}

// realpathWithin resolves the symlinks of the deepest existing ancestor of abs and joins
// the rest, which does not exist yet.
func realpathWithin(abs string) (string, error) {
	rest := ""
	cur := abs
	for i := 0; i < 4096; i++ {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if _, lerr := os.Lstat(cur); lerr == nil {
			return "", err // exists but does not resolve: a dangling or looping symlink
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", err
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
	return "", errors.New("path too deep")
}

// within reports whether p is root or below it (both clean and absolute).
func within(root, p string) bool {
	if p == root {
		return true
	}
	if root == "/" {
		return strings.HasPrefix(p, "/")
	}
	return strings.HasPrefix(p, root+string(filepath.Separator))
}

var (
	imageRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/:@-]*$`)
	nameRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
)

// volume maps a docker_run volume "host:container[:ro|rw]": the host side is confined to
// the workspace, and in read-only mode the bind is made :ro whatever was asked.
func (d *Deployer) volume(spec string) (string, error) {
	if err := safeArg("volume", spec); err != nil {
		return "", err
	}
	parts := strings.Split(spec, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return "", refuse("volume %q: want host:container[:ro]", spec)
	}
	src, dst, mode := parts[0], parts[1], ""
	if len(parts) == 3 {
		mode = parts[2]
		if mode != "ro" && mode != "rw" {
			return "", refuse("volume %q: mode must be ro or rw", spec)
		}
	}
	if !filepath.IsAbs(dst) || filepath.Clean(dst) != dst || strings.Contains(dst, ",") {
		return "", refuse("volume %q: the container path must be a clean absolute path", spec)
	}
	// The host side is always a path (relative to the workspace), as in the seed: a bare
	// name is a directory of the workspace, never something else of the host.
	p, err := Confine(d.Workspace, src)
	if err != nil {
		return "", fmt.Errorf("volume %q: %w", spec, err)
	}
	src = p
	if d.ReadOnly {
		mode = "ro"
	}
	v := src + ":" + dst
	if mode != "" {
		v += ":" + mode
	}
	return v, nil
}
