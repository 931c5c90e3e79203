package sbx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// HostFile is a file on the host that the backend executes (the sbx program, the
// watchdog's shell) or installs into the VM (the agent binary), or a directory where one
// is looked up (PATH).
type HostFile struct {
	Role string // what it is, for the error: "the sbx program (PI_SBX_BIN)"
	Path string
}

// CheckHostFiles refuses host files the sandbox could write. A file is sandbox-writable
// when, symlinks resolved, it lies inside any host directory the sandbox mounts (mounts;
// read-only ones included, see lifecycle.SessionOptions.Mounts). Running such a file
// would run code the sandbox controls on the host, so this is checked before anything is
// started. The one error names every offender.
func CheckHostFiles(files []HostFile, mounts []string) error {
	var bad []string
	for _, f := range files {
		if f.Path == "" {
			continue
		}
		real := realPath(f.Path)
		for _, m := range mounts {
			if m == "" {
				continue
			}
			if within(real, realPath(m)) {
				bad = append(bad, fmt.Sprintf("%s %s is inside %s, which the sandbox mounts", f.Role, f.Path, m))
				break
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s (keep what the host runs outside every directory the sandbox mounts)", ErrSandboxWritable, strings.Join(bad, "; "))
}

// ErrSandboxWritable marks a setup where the host would execute a file the sandbox can
// write.
var ErrSandboxWritable = errors.New("refusing to run on the host a file the sandbox can write")

// ResolveBin pins the sbx program to its real path (PATH looked up once, symlinks
// resolved), so that every later call and the watchdog run exactly the file that was
// checked, whatever the PATH or a symlink on the way points to later. It returns the
// host files to check: the program, or when it cannot be found (calls will then fail,
// naming it) the PATH directories where it would be looked up each time.
func (c *Client) ResolveBin() []HostFile {
	role := "the sbx program"
	if strings.ContainsRune(c.Bin, filepath.Separator) || strings.ContainsRune(c.Bin, '/') {
		role += " (PI_SBX_BIN)"
	}
	path, err := exec.LookPath(c.Bin)
	if err != nil {
		if strings.ContainsRune(c.Bin, filepath.Separator) || strings.ContainsRune(c.Bin, '/') {
			abs, _ := filepath.Abs(c.Bin)
			return []HostFile{{role, abs}}
		}
		var dirs []HostFile
		for _, d := range filepath.SplitList(os.Getenv("PATH")) {
			if d == "" {
				d = "."
			}
			abs, _ := filepath.Abs(d)
			dirs = append(dirs, HostFile{"PATH directory (where " + c.Bin + " would be looked up)", abs})
		}
		return dirs
	}
	abs, err := filepath.Abs(path)
	if err == nil {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		c.Bin = abs
	}
	return []HostFile{{role, path}}
}

// realPath resolves symlinks in p; for a path that does not exist (yet), the longest
// existing parent is resolved and the rest appended, since a file created later there
// is as sandbox-writable as the directory.
func realPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	var rest []string
	for {
		real, err := filepath.EvalSymlinks(abs)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...)
		}
		parent := filepath.Dir(abs)
		if parent == abs || !errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(append([]string{abs}, rest...)...)
		}
		rest = append([]string{filepath.Base(abs)}, rest...)
		abs = parent
	}
}

// within reports whether path is dir or inside it. macOS and Windows file systems are
// case-insensitive by default, so there case does not tell two paths apart.
func within(path, dir string) bool {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		path, dir = strings.ToLower(path), strings.ToLower(dir)
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Mounts returns the host directories sbx lists for the sandbox (without :ro).
func (b Sandbox) Mounts() []string {
	var mounts []string
	for _, w := range b.Workspaces {
		mounts = append(mounts, trimMode(w))
	}
	return mounts
}

// trimMode drops a workspace's :ro/:readonly (or :rw) suffix, as sbx lists them.
func trimMode(ws string) string {
	for _, suffix := range []string{":ro", ":readonly", ":rw"} {
		if strings.HasSuffix(ws, suffix) {
			return strings.TrimSuffix(ws, suffix)
		}
	}
	return ws
}
