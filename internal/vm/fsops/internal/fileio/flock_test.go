//go:build linux

package fileio

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLockedReadAndWriteWaitForLockInode checks that ReadFileLocked and
// WritePiecesLocked, which take LockInode's lock on the descriptor they read or write
// through, still wait for a holder of that lock (another process's edit) and see what
// it wrote.
func TestLockedReadAndWriteWaitForLockInode(t *testing.T) {
	abs := filepath.Join(t.TempDir(), "f.txt")
	if err := os.WriteFile(abs, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		run  func() (string, error)
	}{
		{"read", func() (string, error) {
			data, unlock, err := ReadFileLocked(abs)
			if err != nil {
				return "", err
			}
			unlock()
			return string(data), nil
		}},
		{"write", func() (string, error) {
			if err := WritePiecesLocked(abs, "mine"); err != nil {
				return "", err
			}
			data, err := os.ReadFile(abs)
			return string(data), err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := LockInode(abs)
			type res struct {
				s   string
				err error
			}
			done := make(chan res, 1)
			go func() {
				s, err := tc.run()
				done <- res{s, err}
			}()
			select {
			case r := <-done:
				release()
				t.Fatalf("ran while the lock was held: %q, %v", r.s, r.err)
			case <-time.After(200 * time.Millisecond):
			}
			// The holder writes in place, then lets go.
			if err := os.WriteFile(abs, []byte("holder's"), 0o644); err != nil {
				t.Fatal(err)
			}
			release()
			r := <-done
			if r.err != nil {
				t.Fatal(r.err)
			}
			want := map[string]string{"read": "holder's", "write": "mine"}[tc.name]
			if r.s != want {
				t.Fatalf("got %q, want %q", r.s, want)
			}
		})
	}
}
