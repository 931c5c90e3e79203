//go:build e2e

package fsops

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// smallDisk mounts a tmpfs of size bytes on a fresh directory for the test (root only,
// as CI runs), unmounted when the test ends.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "pi-sbx-test", dir).CombinedOutput()
	require.NoError(t, err, "mount a tmpfs (the test needs root): %s", out)
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fillDisk writes a file until the file system is full.
func fillDisk(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	require.NoError(t, err)
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			require.True(t, errors.Is(err, syscall.ENOSPC), "filling: %v", err)
			return
		}
	}
}

// TestFullDisk: where pi's write succeeds on a full disk, ours does; where it fails, ours
// fails with pi's error and leaves the old content (pi's leaves the file empty or cut).
func TestFullDisk(t *testing.T) {
	ctx := context.Background()
	big := "HEAD unique\n" + strings.Repeat("old content line\n", 3<<20/17)
	small := "X" + strings.Repeat("a", 10<<10)
	tests := []struct {
		name    string
		initial string
		run     func(dir string) error
		wantErr string // "": success
		want    string // the file afterwards
	}{
		{"a large write that shrinks the file succeeds (no room for a second copy)", big,
			func(dir string) error {
				_, err := Write(ctx, dir, WriteArgs{Path: "f", Content: strings.Repeat("n", 2<<20)}, nil)
				return err
			}, "", strings.Repeat("n", 2<<20)},
		{"a large edit that shrinks the file succeeds", big,
			func(dir string) error {
				_, err := Edit(ctx, dir, EditArgs{Path: "f", Edits: []Replacement{{OldText: "HEAD unique\n", NewText: "H\n"}}}, nil)
				return err
			}, "", "H\n" + big[len("HEAD unique\n"):]},
		{"a small write that grows the file fails and keeps it", small,
			func(dir string) error {
				_, err := Write(ctx, dir, WriteArgs{Path: "f", Content: strings.Repeat("n", 200<<10)}, nil)
				return err
			}, "ENOSPC: no space left on device, write", small},
		{"a small edit that grows the file fails and keeps it", small,
			func(dir string) error {
				_, err := Edit(ctx, dir, EditArgs{Path: "f", Edits: []Replacement{{OldText: "X", NewText: strings.Repeat("b", 300<<10)}}}, nil)
				return err
			}, "ENOSPC: no space left on device, write", small},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := smallDisk(t, "4m")
			require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte(tc.initial), 0o644))
			fillDisk(t, dir)
			err := tc.run(dir)
			if tc.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.EqualError(t, err, tc.wantErr)
			}
			got, rerr := os.ReadFile(filepath.Join(dir, "f"))
			require.NoError(t, rerr)
			assert.True(t, tc.want == string(got), "the file afterwards: %d bytes, want %d", len(got), len(tc.want))
			entries, _ := os.ReadDir(dir)
			assert.Len(t, entries, 2, "nothing left beside the file and the filler")
		})
	}
}
