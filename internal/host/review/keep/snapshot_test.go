package keep

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSnapshotOverlay: an overlay workspace's start state has its files with their
// modes and its symbolic links as links to their targets.
func TestSnapshotOverlay(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "run.sh"), []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(ws, "d"), 0o755))
	require.NoError(t, os.Symlink("../a.txt", filepath.Join(ws, "d", "up")))
	require.NoError(t, os.Symlink("/etc", filepath.Join(ws, "abs")))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "d", "b.txt"), []byte("b\n"), 0o644))

	ctx := context.Background()
	k := &Keeper{Git: &Git{Environ: os.Environ()}}
	r := Record{Sandbox: "s", Kind: KindOverlay, Root: ws, GitDir: filepath.Join(t.TempDir(), "s.git")}
	require.NoError(t, k.initStore(ctx, r.GitDir, ""))
	commit, err := k.snapshot(ctx, r)
	require.NoError(t, err)

	show := func(args ...string) string {
		out, err := k.Git.do(ctx, run{dir: r.GitDir, args: args})
		require.NoError(t, err, "%v", args)
		return out
	}
	modes := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(show("ls-tree", "-r", commit)), "\n") {
		meta, p, _ := strings.Cut(line, "\t")
		modes[p] = strings.Fields(meta)[0]
	}
	assert.Equal(t, map[string]string{"a.txt": "100644", "run.sh": "100755", "d/up": "120000", "abs": "120000", "d/b.txt": "100644"}, modes)
	for p, want := range map[string]string{"a.txt": "a\n", "run.sh": "#!/bin/sh\n", "d/up": "../a.txt", "abs": "/etc", "d/b.txt": "b\n"} {
		assert.Equal(t, want, show("cat-file", "blob", commit+":"+p), p)
	}
}
