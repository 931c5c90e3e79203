package sbx

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// A hung sbx hangs every command at once (a stalled Docker Hub token refresh holds a lock
// each command takes, SBX#542; a DNS blip during the refresh, SBX#609), while a slow
// create (a template pull) is alive and busy. To tell them apart without waiting for a
// call's own timeout (minutes), a call still running after ProbeAfter is joined by one
// cheap bounded `sbx version`: if that answers, sbx is alive and the call goes on; if it
// does not answer within ProbeTimeout, the call is ended as ErrHung, naming sbx and what
// to try. A call that ends before ProbeAfter costs nothing more.
//
// An exec is probed with `sbx exec SANDBOX -- true` instead: a long command of the
// user's is alive if a trivial exec into the same sandbox answers, and an exec path that
// hangs (sbx's or the sandbox's) hangs the probe too.
const (
	DefaultProbeAfter   = 5 * time.Second
	DefaultProbeTimeout = 5 * time.Second
	probeOp             = "probe"
)

// hungError is the cause a probe gives a call it ends.
type hungError struct {
	op, probe   string
	ran, waited time.Duration
}

func (h *hungError) Error() string {
	return fmt.Sprintf("%v: `%s` gave no answer within %s while `sbx %s` had run for %s — "+
		"sbx itself is stuck, not your command (a stalled Docker login token refresh or a DNS failure "+
		"hangs sbx's commands); try `sbx daemon restart`, and see `sbx daemon logs` for why",
		ErrHung, h.probe, h.waited, h.op, h.ran)
}

func (h *hungError) Unwrap() error { return ErrHung }

// probeTimes returns when a call is probed and how long the probe may take; ok is false
// when probing is off (either negative).
func (c *Client) probeTimes() (after, limit time.Duration, ok bool) {
	after, limit = c.ProbeAfter, c.ProbeTimeout
	if after == 0 {
		after = DefaultProbeAfter
	}
	if limit == 0 {
		limit = DefaultProbeTimeout
	}
	return after, limit, after > 0 && limit > 0
}

// watchHang probes sbx once if the call is still running after ProbeAfter, and cancels
// the call with a *hungError as its cause if the probe gets no answer. The returned stop
// ends the watch (and a probe under way) once the call is over.
func (c *Client) watchHang(ctx context.Context, cancel context.CancelCauseFunc, cl call) (stop func()) {
	after, limit, ok := c.probeTimes()
	if !ok || cl.op == probeOp || cl.op == "version" {
		return func() {}
	}
	op, args := cl.op, []string{"version"}
	if cl.op == "exec" && cl.sandbox != "" {
		args = c.globals(ctx, probeOp, []string{"exec", cl.sandbox, "--", "true"})
	}
	watchCtx, end := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		start := time.Now()
		t := time.NewTimer(after)
		defer t.Stop()
		select {
		case <-watchCtx.Done():
			return
		case <-t.C:
		}
		_, err := c.runOnce(watchCtx, call{op: probeOp, args: args, timeout: limit, maxOut: 1 << 16})
		if watchCtx.Err() != nil {
			return // the call ended meanwhile: its own outcome stands
		}
		if errors.Is(err, ErrTimeout) {
			cancel(&hungError{op: op, probe: "sbx " + strings.Join(args, " "), ran: time.Since(start).Round(time.Second), waited: limit})
		}
	}()
	return func() {
		end()
		<-done
	}
}

// Probe asks sbx whether it answers at all: one `sbx version` bounded by ProbeTimeout.
// It returns nil when sbx answered (even with an error of its own) and an error wrapping
// ErrHung when it did not answer in time.
func (c *Client) Probe(ctx context.Context) error {
	_, limit, ok := c.probeTimes()
	if !ok {
		limit = DefaultProbeTimeout
	}
	_, err := c.runOnce(ctx, call{op: probeOp, args: []string{"version"}, timeout: limit, maxOut: 1 << 16})
	if errors.Is(err, ErrTimeout) {
		return &hungError{op: "version", probe: "sbx version", waited: limit}
	}
	return nil
}
