//go:build unix

package filelock

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}

	// Held: a second taker waits until its context ends.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Lock while held: %v, want the context's deadline", err)
	}

	// Released: the waiter gets it.
	got := make(chan error, 1)
	go func() {
		u, err := Lock(context.Background(), path)
		if err == nil {
			u()
		}
		got <- err
	}()
	time.Sleep(3 * Poll)
	unlock()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter never got the released lock")
	}
}

// The lock is another process's too, and a holder that dies releases it.
func TestLockAcrossProcessesAndDeath(t *testing.T) {
	flock, err := exec.LookPath("flock")
	if err != nil {
		t.Skip("no flock(1) to hold the lock from another process")
	}
	path := filepath.Join(t.TempDir(), "x.lock")
	holder := exec.Command(flock, "-o", path, "sleep", "60") // -o: sleep does not inherit the lock
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	for deadline := time.Now().Add(5 * time.Second); ; {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		u, err := Lock(ctx, path)
		cancel()
		if err != nil {
			break // held by the other process
		}
		u()
		if time.Now().After(deadline) {
			t.Fatal("flock(1) never took the lock")
		}
	}
	holder.Process.Signal(os.Kill) // flock(1) dies holding it
	holder.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	u, err := Lock(ctx, path)
	if err != nil {
		t.Fatalf("after the holder died: %v", err)
	}
	u()
}
