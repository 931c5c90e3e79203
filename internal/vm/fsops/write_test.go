package fsops

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/fileio"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "exec.sh")
	require.NoError(t, os.WriteFile(existing, []byte("old"), 0o751))
	require.NoError(t, os.Chmod(existing, 0o751))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "file"), []byte("f"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "dir"), 0o755))
	require.NoError(t, os.Symlink("missing", filepath.Join(dir, "dangling")))
	for name, mode := range map[string]os.FileMode{"suid": 0o755 | os.ModeSetuid, "sgid": 0o750 | os.ModeSetgid, "sticky": 0o644 | os.ModeSticky} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("old"), 0o644))
		require.NoError(t, os.Chmod(filepath.Join(dir, name), mode))
	}

	tests := []struct {
		name, path, content string
		wantErr             string
		wantMode            os.FileMode
		root                bool // the mode holds for a privileged writer only
	}{
		{name: "new nested", path: "a/b/new.txt", content: "new\n", wantMode: 0o644},
		{name: "keeps mode", path: "exec.sh", content: "#!/bin/sh\n", wantMode: 0o751},
		// Written in place, as pi: the kernel keeps these for a writer with CAP_FSETID
		// (root) and clears setuid/setgid for others — the same file as pi leaves.
		{name: "keeps setuid", path: "suid", content: "x", wantMode: 0o755 | os.ModeSetuid, root: true},
		{name: "keeps setgid", path: "sgid", content: "x", wantMode: 0o750 | os.ModeSetgid, root: true},
		{name: "keeps sticky", path: "sticky", content: "x", wantMode: 0o644 | os.ModeSticky},
		{name: "directory", path: "dir", wantErr: fmt.Sprintf("EISDIR: illegal operation on a directory, open '%s/dir'", dir)},
		{name: "parent is a file", path: "file/x.txt", wantErr: fmt.Sprintf("EEXIST: file already exists, mkdir '%s/file'", dir)},
		{name: "under a dangling directory symlink", path: "dangling/x.txt", wantErr: fmt.Sprintf("ENOENT: no such file or directory, mkdir '%s/dangling'", dir)},
		{name: "deeper under a dangling directory symlink", path: "dangling/a/x.txt", wantErr: fmt.Sprintf("ENOTDIR: not a directory, mkdir '%s/dangling'", dir)},
		{name: "grandparent is a file", path: "file/d/x.txt", wantErr: fmt.Sprintf("ENOTDIR: not a directory, mkdir '%s/file/d'", dir)},
	}
	old := syscallUmask(0o022)
	defer syscallUmask(old)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root && os.Geteuid() != 0 {
				t.Skip("needs CAP_FSETID")
			}
			res, err := Write(context.Background(), dir, WriteArgs{Path: tt.path, Content: tt.content}, nil)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "Successfully wrote to "+tt.path, res.Content[0].Text)
			p := filepath.Join(dir, tt.path)
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, tt.content, string(b))
			info, err := os.Stat(p)
			require.NoError(t, err)
			assert.Equal(t, tt.wantMode, info.Mode()&(os.ModePerm|fileio.SpecialBits))
		})
	}
	// No temporary files are left behind.
	var names []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if strings.Contains(filepath.Base(p), ".pi-sbx-") {
			names = append(names, p)
		}
		return nil
	})
	assert.Empty(t, names)
}

// TestWriteIsAtomic overwrites a file again and again with one of two contents of
// ReplaceMin bytes while readers read it: a reader must always see one whole content,
// never an empty or mixed file, which a truncate-then-write (pi's fs.WriteFile) would
// expose.
func TestWriteIsAtomic(t *testing.T) {
	dir := t.TempDir()
	a, b := strings.Repeat("A", fileio.ReplaceMin), strings.Repeat("B", fileio.ReplaceMin)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte(a), 0o644))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var bad []string
	var mu sync.Mutex
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				got, err := os.ReadFile(filepath.Join(dir, "f"))
				if err != nil || (string(got) != a && string(got) != b) {
					mu.Lock()
					if len(bad) == 5 {
						cancel()
					}
					bad = append(bad, fmt.Sprintf("err=%v len=%d", err, len(got)))
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < 60; i++ {
		content := a
		if i%2 == 0 {
			content = b
		}
		_, err := Write(context.Background(), dir, WriteArgs{Path: "f", Content: content}, nil)
		require.NoError(t, err)
	}
	cancel()
	wg.Wait()
	assert.Empty(t, bad, "readers saw partial files")
}

// TestSmallWritesKeepTheInode: below ReplaceMin, write and edit rewrite the file in place
// as pi does, so the file stays the one inode that hard links, bind mounts and open
// descriptors see, and keeps what a replace would drop (here an extended attribute).
func TestSmallWritesKeepTheInode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	require.NoError(t, os.WriteFile(path, []byte("old line\n"), 0o640))
	before, err := os.Stat(path)
	require.NoError(t, err)
	held, err := os.Open(path) // what a bind mount or a running program holds
	require.NoError(t, err)
	defer held.Close()
	xattr := unix.Setxattr(path, "user.pi-sbx-test", []byte("kept"), 0)

	_, err = Write(context.Background(), dir, WriteArgs{Path: "f.txt", Content: "new line\n"}, nil)
	require.NoError(t, err)
	_, err = Edit(context.Background(), dir, EditArgs{Path: "f.txt", Edits: []Replacement{{OldText: "new", NewText: "edited"}}}, nil)
	require.NoError(t, err)

	after, err := os.Stat(path)
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "the file was replaced by a new inode")
	assert.Equal(t, os.FileMode(0o640), after.Mode().Perm())
	got, err := io.ReadAll(held)
	require.NoError(t, err)
	assert.Equal(t, "edited line\n", string(got), "an open descriptor sees the new content")
	if xattr == nil { // the file system supports user attributes
		buf := make([]byte, 16)
		n, err := unix.Getxattr(path, "user.pi-sbx-test", buf)
		require.NoError(t, err)
		assert.Equal(t, "kept", string(buf[:n]))
	}
}
