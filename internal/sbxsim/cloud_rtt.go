//go:build linux

package sbxsim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// A cloud sandbox is a WAN away: sbxsim delays each direction of an exec stream by half
// the round trip (SBXSIM_CLOUD_RTT), so that what a client pays per message — a
// request in, its answer out — is one RTT, as over a real link, while bytes keep their
// order. Bandwidth is not limited.

// overWAN runs an exec with its streams delayed: the request RTT/2 before the command
// starts, each stdin chunk (when the command reads stdin) and each output chunk RTT/2
// after it was sent, and the end of the output (the exit status with it) RTT/2 after
// the command ended.
func (c *cli) overWAN(ctx context.Context, rtt time.Duration, delayStdin bool, run func() error) error {
	half := rtt / 2
	if err := c.sleepRTT(ctx, half); err != nil {
		return err
	}
	saved := c.env
	defer func() { c.env = saved }()
	stdout := newDelayedWriter(saved.Stdout, half)
	stderr := newDelayedWriter(saved.Stderr, half)
	c.env.Stdout, c.env.Stderr = stdout, stderr
	if delayStdin && saved.Stdin != nil {
		r, w, err := os.Pipe()
		if err != nil {
			return fmt.Errorf("delaying stdin: %w", err)
		}
		defer r.Close()
		go func() {
			// Ends with the caller's stdin; if the command ends first, this process
			// exits with it blocked on a read, which is harmless.
			in := newDelayedWriter(w, half)
			_, _ = io.Copy(in, saved.Stdin)
			in.Close()
			w.Close()
		}()
		c.env.Stdin = r
	}
	err := run()
	stdout.end() // both ends travel at once
	stderr.end()
	stdout.Close()
	stderr.Close()
	return err
}

// delayedWriter passes each write on to w d after it was made, in order. Writes never
// block on w: a queue holds them.
type delayedWriter struct {
	mu     sync.Mutex
	closed bool
	w      io.Writer
	d      time.Duration
	ch     chan delayedChunk
	done   chan struct{}
}

type delayedChunk struct {
	at time.Time
	b  []byte
}

func newDelayedWriter(w io.Writer, d time.Duration) *delayedWriter {
	dw := &delayedWriter{w: w, d: d, ch: make(chan delayedChunk, 4096), done: make(chan struct{})}
	go dw.loop()
	return dw
}

func (dw *delayedWriter) Write(p []byte) (int, error) {
	dw.mu.Lock()
	defer dw.mu.Unlock()
	if dw.closed {
		return 0, errWANClosed
	}
	dw.ch <- delayedChunk{at: time.Now().Add(dw.d), b: bytes.Clone(p)}
	return len(p), nil
}

// errWANClosed is a write after the stream ended (a straggler of a pty's copy).
var errWANClosed = errors.New("the stream of the cloud sandbox has ended")

func (dw *delayedWriter) loop() {
	defer close(dw.done)
	var err error
	for ch := range dw.ch {
		if wait := time.Until(ch.at); wait > 0 {
			time.Sleep(wait)
		}
		if err == nil && len(ch.b) > 0 {
			_, err = dw.w.Write(ch.b)
		}
	}
}

// end queues the end of the stream, d from now.
func (dw *delayedWriter) end() {
	dw.mu.Lock()
	defer dw.mu.Unlock()
	if !dw.closed {
		dw.closed = true
		dw.ch <- delayedChunk{at: time.Now().Add(dw.d)}
		close(dw.ch)
	}
}

// Close ends the stream (end) and returns when all of it was delivered.
func (dw *delayedWriter) Close() {
	dw.end()
	<-dw.done
}
