package mcpserver

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// This file follows the calls a connection has read and not yet answered: by id (for
// cancellation and the end of input), against the byte budget of large requests held at
// once, and the goroutines that run them.

// bigLine is the size from which a request counts against the in-flight budget; small
// calls (and cancellations) never wait for it.
const bigLine = 256 << 10

// tracker follows the calls read but not answered yet.
type tracker struct {
	mu      sync.Mutex
	calls   map[jsonrpc.ID]*call
	pending int           // calls not cancelled
	idle    chan struct{} // closed while pending is 0
	budget  int64         // bytes of big requests that may still be taken
	freed   chan struct{} // closed and replaced when budget is returned
	max     int64
	// onWait, if set, is told when a call must wait for budget (t.mu is held).
	onWait func(need, max int64)
}

type call struct {
	size      int64    // bytes taken from the budget
	keys      []string // its stand-ins in the connection's jsonwire.Store
	cancelled bool
	abort     context.CancelFunc // of a relayed call
}

func newTracker(budget int64) *tracker {
	idle := make(chan struct{})
	close(idle)
	return &tracker{calls: make(map[jsonrpc.ID]*call), idle: idle, budget: budget, max: budget, freed: make(chan struct{})}
}

// start notes a call; a big one first waits for its share of the budget (or stop). It
// reports whether the call is tracked, or else whether its id is a duplicate.
func (t *tracker) start(id jsonrpc.ID, size int, keys []string, stop <-chan struct{}) (ok, dup bool) {
	need := int64(0)
	if size >= bigLine {
		need = min(int64(size), t.max)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.calls[id] != nil {
		return false, true
	}
	for waited := false; t.budget < need; waited = true {
		if !waited && t.onWait != nil {
			t.onWait(need, t.max)
		}
		freed := t.freed
		t.mu.Unlock()
		select {
		case <-freed:
		case <-stop:
			t.mu.Lock()
			return false, false
		}
		t.mu.Lock()
	}
	t.budget -= need
	t.calls[id] = &call{size: need, keys: keys}
	if t.pending == 0 {
		t.idle = make(chan struct{})
	}
	t.pending++
	return true, false
}

// cancel marks a call the peer cancelled: the end of input no longer waits for it, and
// its answer is dropped.
func (t *tracker) cancel(id jsonrpc.ID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.calls[id]
	if c == nil || c.cancelled {
		return
	}
	c.cancelled = true
	if c.abort != nil {
		c.abort()
	}
	t.release()
}

// setAbort gives a relayed call its cancel function; it reports false
// if the call was cancelled already.
func (t *tracker) setAbort(id jsonrpc.ID, abort context.CancelFunc) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.calls[id]
	if c == nil || c.cancelled {
		return false
	}
	c.abort = abort
	return true
}

// release counts one call as no longer pending; t.mu is held.
func (t *tracker) release() {
	t.pending--
	if t.pending == 0 {
		close(t.idle)
	}
}

// finish notes the answer to a call: whether it should be sent, the call's stand-ins
// (now to be dropped), and release, to be called once the answer is written.
func (t *tracker) finish(id jsonrpc.ID) (send bool, keys []string, release func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.calls[id]
	if c == nil {
		return true, nil, func() {} // an answer to a call not tracked
	}
	delete(t.calls, id)
	if c.size > 0 {
		t.budget += c.size
		close(t.freed)
		t.freed = make(chan struct{})
	}
	if c.cancelled {
		return false, c.keys, func() {} // released when cancelled
	}
	return true, c.keys, func() {
		t.mu.Lock()
		t.release()
		t.mu.Unlock()
	}
}

// waitIdle returns once no call is pending, or when stop or gone is closed (a nil
// gone never is).
func (t *tracker) waitIdle(stop, gone <-chan struct{}) {
	t.mu.Lock()
	idle := t.idle
	t.mu.Unlock()
	select {
	case <-idle:
	case <-stop:
	case <-gone:
	}
}

// workers run functions on goroutines that live on for a while after their work, to take
// the next: a busy connection reuses goroutines whose stacks have grown to what a call
// needs instead of growing a new one's by copies.
type workers struct {
	idle chan func()     // unbuffered: a send succeeds only if a worker is waiting
	stop <-chan struct{} // closed with the connection: idle workers end
}

// workerIdle is how long a worker waits for more work before it ends.
const workerIdle = 10 * time.Second

func (w *workers) run(f func()) {
	select {
	case w.idle <- f:
	default:
		go w.loop(f)
	}
}

func (w *workers) loop(f func()) {
	t := time.NewTimer(workerIdle)
	defer t.Stop()
	for {
		f()
		t.Reset(workerIdle)
		select {
		case f = <-w.idle:
		case <-t.C:
			return
		case <-w.stop:
			return
		}
	}
}

// DefaultMaxUnsent bounds the answers a connection has ready but not yet written (the
// peer is not reading them) before it reads no further calls.
const DefaultMaxUnsent = 64

// unsent counts the answers being written. When max of them wait, the peer is not
// reading: the reader takes no new call until one is written, so a client that stops
// reading stalls new work instead of having its replies pile up in memory. A peer that
// reads is never held up, however many calls run.
type unsent struct {
	mu    sync.Mutex
	n     int
	max   int
	freed chan struct{} // closed and replaced when an answer is written
}

func newUnsent(max int) *unsent { return &unsent{max: max, freed: make(chan struct{})} }

func (u *unsent) enter() {
	u.mu.Lock()
	u.n++
	u.mu.Unlock()
}

func (u *unsent) leave() {
	u.mu.Lock()
	u.n--
	close(u.freed)
	u.freed = make(chan struct{})
	u.mu.Unlock()
}

// wait returns once fewer than max answers wait to be written; false if stop closed first.
func (u *unsent) wait(stop <-chan struct{}) bool {
	u.mu.Lock()
	for u.n >= u.max {
		freed := u.freed
		u.mu.Unlock()
		select {
		case <-freed:
		case <-stop:
			return false
		}
		u.mu.Lock()
	}
	u.mu.Unlock()
	return true
}
