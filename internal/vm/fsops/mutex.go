package fsops

import (
	"context"
	"os"
	"path/filepath"
	"sync"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/fileio"
)

// MutationQueue serializes the mutations (write, edit) of one file, as pi's
// withFileMutationQueue does: calls on the same file run one after another, calls on
// different files in parallel. The key is the file's real path, so two names of one file
// (a symlink, "a/../b") share a turn; a file that does not exist yet is keyed by its
// resolved path. The zero value is not usable; use NewMutationQueue.
type MutationQueue struct {
	mu    sync.Mutex
	files map[string]*fileTurn
}

// fileTurn is one file's lock and the number of calls holding or awaiting it.
type fileTurn struct {
	lock    chan struct{} // capacity 1: holding the token means holding the file
	waiters int
}

// NewMutationQueue returns an empty queue.
func NewMutationQueue() *MutationQueue {
	return &MutationQueue{files: make(map[string]*fileTurn)}
}

// Do runs fn while holding path's turn. It returns ctx's cancellation as pi's
// "Operation aborted" when the turn does not come in time, and, as pi does, the error of
// resolving the path (a symlink loop) without running fn.
func (q *MutationQueue) Do(ctx context.Context, path string, fn func() error) error {
	key, err := mutationKey(path)
	if err != nil {
		return err
	}
	q.mu.Lock()
	t := q.files[key]
	if t == nil {
		t = &fileTurn{lock: make(chan struct{}, 1)}
		q.files[key] = t
	}
	t.waiters++
	q.mu.Unlock()
	defer q.leave(key, t)

	select {
	case t.lock <- struct{}{}:
	case <-ctx.Done():
		return fileio.ErrAborted
	}
	defer func() { <-t.lock }()
	return fn()
}

// leave forgets a file once nobody holds or awaits it, so the map does not grow.
func (q *MutationQueue) leave(key string, t *fileTurn) {
	q.mu.Lock()
	defer q.mu.Unlock()
	t.waiters--
	if t.waiters == 0 {
		delete(q.files, key)
	}
}

// mutationKey is pi's getMutationQueueKey: the real path, or the resolved path when the
// file (or a directory on the way) does not exist. Other failures (ELOOP, EACCES) are
// returned as Node's realpath error, which pi throws.
func mutationKey(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	real, err := filepath.EvalSymlinks(abs)
	if err == nil {
		return real, nil
	}
	// EvalSymlinks does not report errnos; stat(2) tells why the path does not resolve.
	if _, serr := os.Stat(abs); serr != nil && !fileio.IsNotExist(serr) && fileio.ErrCode(serr) != "" {
		return "", fileio.NodeErr(serr, "realpath", abs)
	}
	return abs, nil
}

// orPrivate returns q, or a fresh queue when q is nil. Whoever runs concurrent calls (the
// tool registry) owns one queue and passes it to every write and edit.
func (q *MutationQueue) orPrivate() *MutationQueue {
	if q != nil {
		return q
	}
	return NewMutationQueue()
}
