package shell

import (
	"context"
	"time"
)

// PtyExecOptions describe a command run by PtyExec.
type PtyExecOptions struct {
	Dir        string   // working directory; "" means the current one
	Env        []string // added to the process's environment; a later KEY wins
	Cols, Rows uint16   // window size; 0 means 80×24
	// OnOutput receives the terminal's output as it comes (gathered for up to 30 ms or
	// 64 KB, whichever is first), decoded as UTF-8 the way
	// JavaScript's streaming TextDecoder does: a character split across two reads waits
	// for the second, invalid bytes become U+FFFD. May be nil.
	OnOutput func(text string)
	// OnStart, if set, receives a function that resizes the command's terminal while it
	// runs (the command gets SIGWINCH); it must not be called after PtyExec returns.
	OnStart func(resize func(cols, rows uint16) error)
}

// exitGrace is how long PtyExec keeps reading after the shell has exited: output already
// in flight still arrives, but a background process that keeps the terminal open does
// not hold the call (pi's bash waits the same 100 ms for its pipes).
const exitGrace = 100 * time.Millisecond

// How PtyExec gathers output into pieces (see there).
const (
	coalesceWait  = 30 * time.Millisecond
	coalesceBytes = 64 * 1024
)

// PtyExec runs command with the shell pi uses (`bash -c`, else `sh -c`) with its output
// on a terminal of its own, as a user's `!` command in a shell would: programs see a tty,
// colours and progress bars behave as interactively. Its input is at end-of-file, as in
// pi (nobody types into a `!` command), and pagers are off. It returns the exit code
// (128 + n for a death by signal n). Cancelling ctx kills the command's process group; what is left of the group
// when PtyExec returns is killed too.
func PtyExec(ctx context.Context, command string, o PtyExecOptions) (int, error) {
	// Pagers pass their text through, as they do under pi's own `!`, whose output is a
	// pipe: here stdout is a terminal, and a pager on it would wait for keys nobody sends.
	// These come after the call's own variables, so they win.
	env := append(append([]string(nil), o.Env...), "PAGER=cat", "GIT_PAGER=cat", "MANPAGER=cat", "SYSTEMD_PAGER=cat")
	p, err := StartPty(ctx, []string{shellPath(), "-c", command}, PtyOptions{Dir: o.Dir, Env: env, Cols: o.Cols, Rows: o.Rows, NoInput: true})
	if err != nil {
		return -1, err
	}
	defer p.Close()
	if o.OnStart != nil {
		o.OnStart(p.Resize)
	}
	chunks := make(chan []byte, 16)
	go func() {
		defer close(chunks)
		for {
			buf := make([]byte, 32*1024)
			n, err := p.Read(buf)
			if n > 0 {
				chunks <- buf[:n]
			}
			if err != nil {
				return
			}
		}
	}()
	// Output is passed on in pieces gathered for up to coalesceWait or coalesceBytes: a
	// terminal reads a few KB at a time, and each message costs the client a render (pi
	// redraws its `!` box per piece), so a flood in 4 KB pieces is many times slower to
	// show than the same bytes in 64 KB ones. A trickle still arrives within 30 ms.
	var dec utf8Decoder
	var pending []byte
	var flushAt <-chan time.Time
	flush := func() {
		if len(pending) > 0 && o.OnOutput != nil {
			o.OnOutput(string(pending))
		}
		pending, flushAt = pending[:0], nil
	}
	done := p.Done()
	var grace <-chan time.Time
	var exited time.Time
loop:
	for {
		select {
		case b, ok := <-chunks:
			if !ok {
				break loop
			}
			pending = append(pending, dec.decode(b)...)
			if len(pending) >= coalesceBytes {
				flush()
			} else if flushAt == nil && len(pending) > 0 {
				flushAt = time.After(coalesceWait)
			}
			if grace != nil {
				grace = time.After(exitGrace)
			}
		case <-flushAt:
			flush()
		case <-done:
			done, grace, exited = nil, time.After(exitGrace), time.Now()
		case <-grace:
			if OutputOver(p.Pgid(), len(chunks)+p.Pending(), time.Since(exited)) {
				break loop
			}
			grace = time.After(exitGrace)
		}
	}
	go func() { // the reader ends when Close closes the terminal
		for range chunks {
		}
	}()
	pending = append(pending, dec.flush()...)
	flush()
	code, err := p.Wait()
	if ctx.Err() != nil {
		return code, ctx.Err()
	}
	return code, err
}
