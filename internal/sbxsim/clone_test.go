//go:build linux

package sbxsim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCloneRootOf: --clone's preconditions, as sbx states them: an explicit path inside
// a git repository, not a linked worktree, .git a real directory.
func TestCloneRootOf(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".git"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "sub"), 0o755))
	wt := filepath.Join(root, "wt")
	require.NoError(t, os.MkdirAll(wt, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: x\n"), 0o644))
	link := filepath.Join(root, "link")
	require.NoError(t, os.MkdirAll(link, 0o755))
	require.NoError(t, os.Symlink(filepath.Join(repo, ".git"), filepath.Join(link, ".git")))
	plain := filepath.Join(root, "plain")
	require.NoError(t, os.MkdirAll(plain, 0o755))
	for _, tc := range []struct {
		ws      []Workspace
		want    string
		wantErr string
	}{
		{[]Workspace{{Path: repo}}, repo, ""},
		{[]Workspace{{Path: filepath.Join(repo, "sub")}}, repo, ""},
		{nil, "", "--clone requires an explicit workspace path"},
		{[]Workspace{{Path: wt}}, "", "is a git worktree"},
		{[]Workspace{{Path: link}}, "", ".git must be a real directory"},
		{[]Workspace{{Path: plain}}, "", "is not inside a git repository"},
	} {
		got, err := cloneRootOf(tc.ws)
		if tc.wantErr != "" {
			require.Error(t, err, "%v", tc.ws)
			assert.Contains(t, err.Error(), tc.wantErr)
			continue
		}
		require.NoError(t, err)
		real, _ := filepath.EvalSymlinks(tc.want)
		assert.Equal(t, real, got)
	}
}

// TestUnsavedBranches: a clone's branch is unsaved until some host ref holds its tip
// (fetched under refs/sandboxes/<name>/, or the host's own branch), loose or packed.
func TestUnsavedBranches(t *testing.T) {
	dir := t.TempDir()
	sb := &Sandbox{Name: "b", Clone: &Clone{Root: filepath.Join(dir, "host"), Dir: filepath.Join(dir, "clone")}}
	write := func(p, s string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
	}
	a, b, c := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)
	write(filepath.Join(sb.Clone.Dir, ".git/refs/heads/main"), a+"\n")
	write(filepath.Join(sb.Clone.Dir, ".git/refs/heads/feat/x"), b+"\n")
	write(filepath.Join(sb.Clone.Dir, ".git/packed-refs"), "# pack-refs\n"+c+" refs/heads/packed\n")
	write(filepath.Join(sb.Clone.Root, ".git/refs/heads/main"), a+"\n")
	assert.Equal(t, []string{"feat/x", "packed"}, unsavedBranches(sb))
	write(filepath.Join(sb.Clone.Root, ".git/packed-refs"), b+" refs/sandboxes/b/feat/x\n")
	write(filepath.Join(sb.Clone.Root, ".git/refs/sandboxes/b/packed"), c+"\n")
	assert.Empty(t, unsavedBranches(sb))
}
