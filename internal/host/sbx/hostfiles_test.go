package sbx

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckHostFiles: a host file is refused when, symlinks resolved, it lies inside a
// mount, including one that does not exist yet; siblings with a common prefix are not.
func TestCheckHostFiles(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	for _, d := range []string{"ws/bin", "ws-other", "out"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	for _, f := range []string{"ws/bin/sbx", "ws-other/sbx", "out/sbx"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte("#!/bin/sh\n"), 0o755))
	}
	require.NoError(t, os.Symlink(filepath.Join(ws, "bin/sbx"), filepath.Join(root, "out/link-in")))
	require.NoError(t, os.Symlink(filepath.Join(root, "out/sbx"), filepath.Join(ws, "bin/link-out")))
	require.NoError(t, os.Symlink(ws, filepath.Join(root, "ws-alias")))
	tests := []struct {
		path    string
		mounts  []string
		refused bool
	}{
		{"ws/bin/sbx", []string{ws}, true},
		{"ws", []string{ws}, true},
		{"ws/bin/not-yet", []string{ws}, true},
		{"ws/new-dir/not-yet", []string{ws}, true},
		{"out/link-in", []string{ws}, true},
		{"out/sbx", []string{filepath.Join(root, "ws-alias")}, false},
		{"ws/bin/sbx", []string{filepath.Join(root, "ws-alias")}, true},
		{"ws-other/sbx", []string{ws}, false},
		{"out/sbx", []string{ws}, false},
		{"out/sbx", []string{"/nonexistent", ws, filepath.Join(root, "out")}, true},
		{"out/sbx", nil, false},
	}
	for _, tc := range tests {
		err := CheckHostFiles([]HostFile{{"the sbx program", filepath.Join(root, tc.path)}}, tc.mounts)
		if tc.refused {
			assert.ErrorIs(t, err, ErrSandboxWritable, "%s in %v", tc.path, tc.mounts)
		} else {
			assert.NoError(t, err, "%s in %v", tc.path, tc.mounts)
		}
	}
	// A symlink inside the workspace that points out is the link's target that runs
	// (ResolveBin pins it), so only what it resolves to counts.
	assert.NoError(t, CheckHostFiles([]HostFile{{"x", filepath.Join(ws, "bin/link-out")}}, []string{ws}))
}

// TestResolveBinPinsTheRealFile: the sbx program is looked up once and pinned to its real
// path, so a symlink repointed later (or a PATH that changes) cannot swap it.
func TestResolveBinPinsTheRealFile(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "sbx-real")
	require.NoError(t, os.WriteFile(real, []byte("#!/bin/sh\n"), 0o755))
	bin := filepath.Join(dir, "bin")
	require.NoError(t, os.Mkdir(bin, 0o755))
	require.NoError(t, os.Symlink(real, filepath.Join(bin, "sbx")))
	t.Setenv("PATH", bin)
	c := &Client{Bin: "sbx"}
	files := c.ResolveBin()
	assert.Equal(t, real, c.Bin)
	assert.Equal(t, []HostFile{{"the sbx program", filepath.Join(bin, "sbx")}}, files)

	c = &Client{Bin: "sbx"}
	t.Setenv("PATH", dir+":"+bin+"-missing")
	files = c.ResolveBin()
	assert.Equal(t, "sbx", c.Bin, "not found: left as is (calls fail naming it)")
	assert.Len(t, files, 2, "every PATH directory it would be looked up in is checked")
}
