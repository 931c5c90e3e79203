package keep

import (
	"archive/tar"
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlan(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	wt := filepath.Join(root, "wt")
	linked := filepath.Join(root, "linked")
	for _, d := range []string{filepath.Join(repo, ".git"), filepath.Join(repo, "sub/dir"), wt, filepath.Join(root, "plain")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+repo+"/.git/worktrees/wt\n"), 0o644))
	require.NoError(t, os.MkdirAll(linked, 0o755))
	require.NoError(t, os.Symlink(filepath.Join(repo, ".git"), filepath.Join(linked, ".git")))
	for _, tc := range []struct{ ws, kind, root string }{
		{repo, KindClone, repo},
		{filepath.Join(repo, "sub/dir"), KindClone, repo},
		{wt, KindOverlay, wt},         // a linked worktree: sbx cannot clone it
		{linked, KindOverlay, linked}, // .git a symlink: not a real directory
		{filepath.Join(root, "plain"), KindOverlay, filepath.Join(root, "plain")},
	} {
		kind, r := Plan(tc.ws)
		assert.Equal(t, tc.kind, kind, tc.ws)
		assert.Equal(t, tc.root, r, tc.ws)
	}
}

// TestImportStream: the upper layer's entries become fast-import commands: files with
// their modes, links, hard links, whiteouts and opaque directories as deletions, and
// names that leave the root or enter .git dropped.
func TestImportStream(t *testing.T) {
	var arch bytes.Buffer
	tw := tar.NewWriter(&arch)
	add := func(h *tar.Header, body string) {
		h.Size = int64(len(body))
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		require.NoError(t, tw.WriteHeader(h))
		if h.Typeflag == tar.TypeReg {
			_, err := tw.Write([]byte(body))
			require.NoError(t, err)
		}
	}
	add(&tar.Header{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755}, "")
	add(&tar.Header{Name: "./a.txt", Typeflag: tar.TypeReg, Mode: 0o644}, "hello\n")
	add(&tar.Header{Name: "./run.sh", Typeflag: tar.TypeReg, Mode: 0o755}, "#!/bin/sh\n")
	add(&tar.Header{Name: "./hard", Typeflag: tar.TypeLink, Linkname: "./run.sh"}, "")
	add(&tar.Header{Name: "./link", Typeflag: tar.TypeSymlink, Linkname: "a.txt"}, "")
	add(&tar.Header{Name: "./gone", Typeflag: tar.TypeChar}, "")
	add(&tar.Header{Name: "./dev", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3}, "")
	add(&tar.Header{Name: "./src", Typeflag: tar.TypeDir, Mode: 0o755, PAXRecords: map[string]string{"SCHILY.xattr.trusted.overlay.opaque": "y"}}, "")
	add(&tar.Header{Name: "./src/new\nline", Typeflag: tar.TypeReg, Mode: 0o644}, "x")
	add(&tar.Header{Name: "../escape", Typeflag: tar.TypeReg, Mode: 0o644}, "no")
	add(&tar.Header{Name: "./.git/hooks/pre-commit", Typeflag: tar.TypeReg, Mode: 0o755}, "no")
	require.NoError(t, tw.Close())

	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	require.NoError(t, importStream(w, tar.NewReader(&arch), "refs/x", "abc123", time.Unix(42, 0), false))
	s := out.String()
	_, cmds, ok := strings.Cut(s, "from abc123\n")
	require.True(t, ok, s)
	assert.Equal(t, `M 100644 :1 a.txt
M 100755 :2 run.sh
M 100755 :2 hard
M 120000 :3 link
D gone
D src
M 100644 :4 "src/new\nline"

done
`, cmds)
	assert.Contains(t, s, "commit refs/x\ncommitter pi-sbx-backend <pi-sbx-backend@localhost> 42 +0000\n")
	assert.NotContains(t, s, "no\n", "the escaping and .git entries' contents are not even stored")
}

func TestStoreHasCloud(t *testing.T) {
	s := Store{Dir: filepath.Join(t.TempDir(), "review")}
	assert.False(t, s.HasCloud(), "no store yet")
	require.NoError(t, s.Save(Record{Sandbox: "pi-sbx-1-local", Workspace: "/w"}))
	require.NoError(t, os.WriteFile(filepath.Join(s.Dir, "broken.json"), []byte("{"), 0o600))
	assert.False(t, s.HasCloud(), "local records only")
	require.NoError(t, s.Save(Record{Sandbox: "pi-sbx-2-cloud", Workspace: "/w", Cloud: true}))
	assert.True(t, s.HasCloud())
}
