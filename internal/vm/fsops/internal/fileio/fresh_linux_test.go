//go:build linux

package fileio

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestMountTypeFromTheMountTable checks that the mount table names the type of /proc's
// file system (device 0:N, as FUSE's are) and that a file on an ordinary file system is
// not taken for a share's.
func TestMountTypeFromTheMountTable(t *testing.T) {
	var stx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, "/proc/self/status", 0, unix.STATX_TYPE, &stx); err != nil {
		t.Skip(err)
	}
	if typ, ok := mountType(stx.Dev_major, stx.Dev_minor); !ok || typ != "proc" {
		t.Fatalf("mountType of /proc = %q, %v; want proc", typ, ok)
	}
	if _, ok := mountType(0, 1<<19); ok {
		t.Fatal("a device no mount has was found")
	}
	abs := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(abs, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(abs)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if onFUSE(int(f.Fd())) {
		t.Fatalf("%s taken for a file on FUSE", abs)
	}
}
