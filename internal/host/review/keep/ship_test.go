package keep

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCloudShipAsked: the paths asked for (Record.Ship) arrive in the cloud sandbox at
// their paths although ignored or left out by default, in a git workspace (as an
// archive beside the bundle) and in any other; what is not asked for stays out; neither
// is part of the start commit nor comes back as work.
func TestCloudShipAsked(t *testing.T) {
	for _, tc := range []struct {
		name string
		git  bool
		sub  string // the workspace, under the repository's root
	}{
		{name: "tree"},
		{name: "git", git: true},
		{name: "git, the workspace a subdirectory", git: true, sub: "app"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			ws := filepath.Join(root, tc.sub)
			k, vm := newCloudKeeper(t, root)
			ctx := context.Background()
			if tc.git {
				require.NoError(t, os.Mkdir(filepath.Join(root, ".git"), 0o755))
				_, err := k.Git.do(ctx, run{dir: filepath.Join(root, ".git"), workTree: root, args: []string{"init", "-q", "-b", "main"}})
				require.NoError(t, err)
			}
			write(t, ws, map[string]string{
				"a.txt": "a\n", ".gitignore": "vendor/\n.env\nnode_modules/\nbuild/\n",
				"vendor/lib/v.go": "package lib\n", "vendor/tool.sh": "#!/bin/sh\n", ".env": "K=v\n",
				"node_modules/dep/index.js": "x\n", "build/out.bin": "built\n",
			})
			require.NoError(t, os.Symlink("lib/v.go", filepath.Join(ws, "vendor", "link")))
			if tc.git {
				hostGit(t, k, root, "add", "-A")
				hostGit(t, k, root, "commit", "-q", "-m", "one")
			}
			r := k.NewCloudRecord("box", ws)
			r.Ship = []string{"vendor", ".env", "node_modules/dep", "vendor/lib"}
			require.NoError(t, k.Begin(ctx, r))
			require.NoError(t, k.Seed(ctx, r))

			p := func(s string) string { return filepath.ToSlash(filepath.Join(tc.sub, s)) }
			want := []string{p(".env"), p(".gitignore"), p("a.txt"), p("node_modules/dep/index.js"), p("vendor/lib/v.go"), p("vendor/link"), p("vendor/tool.sh")}
			sort.Strings(want)
			assert.Equal(t, want, listFiles(t, vm.root), "asked for: in; build/ not asked for: out")
			target, err := os.Readlink(filepath.Join(vm.root, tc.sub, "vendor", "link"))
			require.NoError(t, err)
			assert.Equal(t, "lib/v.go", target, "a symbolic link is shipped as one")
			fi, err := os.Stat(filepath.Join(vm.root, tc.sub, "vendor", "tool.sh"))
			require.NoError(t, err)
			assert.NotZero(t, fi.Mode()&0o100, "modes are shipped")
			leftover, _ := filepath.Glob(filepath.Join(vm.tmp, "*"))
			assert.Empty(t, leftover, "the archives are removed once unpacked")
			start, err := k.Git.do(ctx, run{dir: r.GitDir, args: []string{"ls-tree", "-r", "--name-only", "--full-tree", BaseRef("box")}})
			require.NoError(t, err)
			assert.NotContains(t, start, "vendor", "not part of the start commit")

			// The sandbox changes an asked-for file and its own: only its own comes back.
			write(t, vm.root, map[string]string{p("vendor/lib/v.go"): "package lib // edited\n", p("a.txt"): "a, edited\n"})
			ch, err := k.Collect(ctx, r)
			require.NoError(t, err)
			paths, err := k.Unlanded(ctx, ch)
			require.NoError(t, err)
			assert.Equal(t, []string{p("a.txt")}, paths)
		})
	}
}

// TestCloudShipAskedIsBounded: what is asked for counts with the start state against
// the bound.
func TestCloudShipAskedIsBounded(t *testing.T) {
	ws := t.TempDir()
	write(t, ws, map[string]string{"a.txt": "a\n", ".gitignore": "big/\n"})
	require.NoError(t, os.Mkdir(filepath.Join(ws, "big"), 0o755))
	f, err := os.Create(filepath.Join(ws, "big", "sparse"))
	require.NoError(t, err)
	require.NoError(t, f.Truncate(MaxShipBytes-1)) // alone within the bound; not with a.txt
	require.NoError(t, f.Close())
	k, _ := newCloudKeeper(t, ws)
	ctx := context.Background()
	r := k.NewCloudRecord("box", ws)
	r.Ship = []string{"big"}
	require.NoError(t, k.Begin(ctx, r))
	err = k.Seed(ctx, r)
	assert.ErrorContains(t, err, "the paths PI_SBX_CLOUD_SHIP asks for: shipping big: the workspace has more than 512 MiB")
}

// TestCheckShip: a path asked for must exist in the workspace and not lead out of it.
func TestCheckShip(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	write(t, ws, map[string]string{"vendor/v.txt": "v\n"})
	write(t, outside, map[string]string{"secret/key": "k\n"})
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "out")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(ws, "linked")))
	for _, tc := range []struct {
		paths []string
		want  string // "" for none
	}{
		{[]string{"vendor", "vendor/v.txt", "."}, ""},
		{[]string{"linked"}, ""}, // shipped as a link, not followed
		{[]string{"missing"}, "missing does not exist in the workspace " + ws},
		{[]string{"vendor", "vendor/nope.txt"}, "vendor/nope.txt does not exist"},
		{[]string{"out/secret"}, "out/secret is outside the workspace " + ws + " (through a symbolic link)"},
		{[]string{"out/secret/key"}, "(through a symbolic link)"},
		{[]string{"../x"}, "../x is outside the workspace"},
		{[]string{outside}, "is outside the workspace"},
	} {
		err := CheckShip(ws, tc.paths)
		if tc.want == "" {
			assert.NoError(t, err, "%q", tc.paths)
			continue
		}
		assert.ErrorContains(t, err, tc.want, "%q", tc.paths)
	}
}
