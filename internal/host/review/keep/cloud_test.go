package keep

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// cloudVM stands in for sbx --cloud: a "VM" of two host directories, the workspace's
// path mapped to root and /tmp to tmp; cp copies into it, exec runs the command here
// with the paths mapped (sh, tar, git: what the VM has). It records every argv.
type cloudVM struct {
	ws, root, tmp string
	mu            sync.Mutex
	argvs         [][]string
}

func (v *cloudVM) mapPath(s string) string {
	s = strings.ReplaceAll(s, v.ws, v.root)
	return strings.ReplaceAll(s, "/tmp/pi-sbx-", v.tmp+"/pi-sbx-")
}

func (v *cloudVM) Start(ctx context.Context, bin string, c sbx.Cmd) (sbx.Process, error) {
	args := c.Args
	if len(args) > 0 && args[0] == "version" {
		io.WriteString(c.Stdout, "Client Version: v0.55.0 abc\nServer Version: v0.55.0 abc\n")
		return done(0), nil
	}
	v.mu.Lock()
	v.argvs = append(v.argvs, args)
	v.mu.Unlock()
	for len(args) > 0 && strings.HasPrefix(args[0], "--") {
		args = args[1:]
	}
	switch args[0] {
	case "inspect":
		io.WriteString(c.Stdout, `{"name":"box","status":"running"}`)
		return done(0), nil
	case "cp":
		data, err := os.ReadFile(args[1])
		if err != nil {
			return nil, err
		}
		_, dst, _ := strings.Cut(args[2], ":")
		return done(0), os.WriteFile(v.mapPath(dst), data, 0o600)
	case "exec":
		i := 0
		for i < len(args) && args[i] != "--" {
			i++
		}
		cmd := append([]string(nil), args[i+1:]...)
		for j := range cmd {
			cmd[j] = v.mapPath(cmd[j])
		}
		return sbx.ExecRunner{}.Start(ctx, "/bin/"+cmd[0], sbx.Cmd{Args: cmd[1:], Env: os.Environ(), Stdin: c.Stdin, Stdout: c.Stdout, Stderr: c.Stderr})
	}
	return done(1), nil
}

type done int

func (d done) Wait() (int, error) { return int(d), nil }

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(root, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") {
			mode = 0o755
		}
		require.NoError(t, os.WriteFile(full, []byte(body), mode))
	}
}

// listFiles lists root's files (not directories), relative, .git left out.
func listFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	}))
	sort.Strings(out)
	return out
}

func newCloudKeeper(t *testing.T, ws string) (*Keeper, *cloudVM) {
	vm := &cloudVM{ws: ws, root: filepath.Join(t.TempDir(), "root"), tmp: t.TempDir()}
	k := &Keeper{Git: &Git{Environ: os.Environ()}, Client: &sbx.Client{Bin: "sbx", Runner: vm}, Store: Store{Dir: t.TempDir()}}
	return k, vm
}

// hostGit runs git in dir for a test's fixture.
func hostGit(t *testing.T, k *Keeper, dir string, args ...string) string {
	t.Helper()
	out, err := k.Git.do(context.Background(), run{dir: filepath.Join(dir, ".git"), workTree: dir, args: append([]string{"-C", dir}, args...)})
	require.NoError(t, err, "git %v", args)
	return out
}

// TestCloudTreeShipsAndCollects: a workspace that is not a git repository is shipped
// to a cloud sandbox as its files less the ignored ones and the dependency and build
// directories; what the sandbox changes comes back as exactly those changes (ignored
// output aside); every sbx call carries --cloud and none -u or --privileged.
func TestCloudTreeShipsAndCollects(t *testing.T) {
	ws := t.TempDir()
	write(t, ws, map[string]string{
		"a.txt": "a\n", "run.sh": "#!/bin/sh\n", "sub/b.txt": "b\n", ".gitignore": "*.log\n",
		"debug.log": "noise\n", "node_modules/x/index.js": "x\n", "web/build/app.js": "built\n",
	})
	require.NoError(t, os.Symlink("a.txt", filepath.Join(ws, "link")))
	k, vm := newCloudKeeper(t, ws)
	ctx := context.Background()
	r := k.NewCloudRecord("box", ws)
	require.Equal(t, KindTree, r.Kind)
	require.NoError(t, k.Begin(ctx, r))
	require.NoError(t, k.Seed(ctx, r))

	assert.Equal(t, []string{".gitignore", "a.txt", "link", "run.sh", "sub/b.txt"}, listFiles(t, vm.root))
	fi, err := os.Stat(filepath.Join(vm.root, "run.sh"))
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&0o100, "modes are shipped")
	target, err := os.Readlink(filepath.Join(vm.root, "link"))
	require.NoError(t, err)
	assert.Equal(t, "a.txt", target)
	leftover, _ := filepath.Glob(filepath.Join(vm.tmp, "*"))
	assert.Empty(t, leftover, "the archive is removed once unpacked")

	// The sandbox's work: an edit, a new file, a deletion, and output that stays out.
	write(t, vm.root, map[string]string{"a.txt": "a, edited\n", "new.txt": "new\n", "test.log": "x\n", "node_modules/y.js": "y\n"})
	require.NoError(t, os.Remove(filepath.Join(vm.root, "sub/b.txt")))
	ch, err := k.Collect(ctx, r)
	require.NoError(t, err)
	paths, err := k.Unlanded(ctx, ch)
	require.NoError(t, err)
	sort.Strings(paths)
	assert.Equal(t, []string{"a.txt", "new.txt", "sub/b.txt"}, paths)
	body, err := os.ReadFile(filepath.Join(ws, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "a\n", string(body), "the host is untouched")

	for _, a := range vm.argvs {
		assert.Contains(t, a[:2], "--cloud", "%q", a)
		assert.NotContains(t, a, "--privileged", "%q", a)
		assert.NotContains(t, a, "-u", "%q", a)
	}
}

// TestCloudCloneShipsAndCollects: a git workspace is shipped as its start commit; in
// the VM it is a repository at the same path, on the host's branch, whose uncommitted
// changes are the host's; the work comes back as a bundle of what is new.
func TestCloudCloneShipsAndCollects(t *testing.T) {
	ws := t.TempDir()
	k, vm := newCloudKeeper(t, ws)
	ctx := context.Background()
	require.NoError(t, os.Mkdir(filepath.Join(ws, ".git"), 0o755))
	_, err := k.Git.do(ctx, run{dir: filepath.Join(ws, ".git"), workTree: ws, args: []string{"init", "-q", "-b", "topic"}})
	require.NoError(t, err)
	write(t, ws, map[string]string{"a.txt": "a\n", "b.txt": "b\n", ".gitignore": "out/\n"})
	hostGit(t, k, ws, "add", "-A")
	hostGit(t, k, ws, "commit", "-q", "-m", "one")
	write(t, ws, map[string]string{"a.txt": "a, uncommitted\n", "untracked.txt": "u\n", "out/big.bin": "ignored\n"})

	r := k.NewCloudRecord("box", ws)
	require.Equal(t, KindClone, r.Kind)
	require.NoError(t, k.Begin(ctx, r))
	require.NoError(t, k.Seed(ctx, r))
	assert.Equal(t, []string{".gitignore", "a.txt", "b.txt", "untracked.txt"}, listFiles(t, vm.root))
	body, err := os.ReadFile(filepath.Join(vm.root, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "a, uncommitted\n", string(body))
	assert.Equal(t, "topic\n", hostGit(t, k, vm.root, "symbolic-ref", "--short", "HEAD"))
	assert.Contains(t, hostGit(t, k, vm.root, "status", "--porcelain"), " M a.txt", "the index is the host's HEAD")

	write(t, vm.root, map[string]string{"b.txt": "b, by the sandbox\n", "c.txt": "c\n"})
	ch, err := k.Collect(ctx, r)
	require.NoError(t, err)
	paths, err := k.Unlanded(ctx, ch)
	require.NoError(t, err)
	sort.Strings(paths)
	assert.Equal(t, []string{"b.txt", "c.txt"}, paths)
	for _, a := range vm.argvs {
		assert.Contains(t, a[:2], "--cloud", "%q", a)
	}
}

// TestCloudShipIsBounded: past the bound, the start fails with what to do.
func TestCloudShipIsBounded(t *testing.T) {
	var b shipBound
	require.NoError(t, b.add(MaxShipBytes-1))
	err := b.add(2)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "512 MiB")
	b = shipBound{files: MaxShipFiles}
	assert.ErrorContains(t, b.add(0), "files")
}

// TestClientForTheRecord: a record's sandbox is reached on its own side, whatever the
// keeper's client is.
func TestClientForTheRecord(t *testing.T) {
	local := &sbx.Client{Bin: "sbx"}
	for _, tc := range []struct{ keeper, record bool }{{false, false}, {false, true}, {true, false}, {true, true}} {
		k := &Keeper{Client: local}
		if tc.keeper {
			k.Client = local.InCloud()
		}
		assert.Equal(t, tc.record, k.clientFor(Record{Cloud: tc.record}).Cloud, "%+v", tc)
	}
}
