package terminal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sync"
	"syscall"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/shell"
)

// exitGrace is how long, after the command exited, output still in flight is waited for
// before the session counts as finished: a background process that keeps the output
// open does not hold back the exit status (pi's bash waits the same 100 ms).
const exitGrace = 100 * time.Millisecond

// writeTimeout bounds one write of input to a session.
const writeTimeout = 5 * time.Second

// scanEvery is how often, at most, a wait matches its pattern against new output.
const scanEvery = 10 * time.Millisecond

// ErrNoInput is the error of writing to a session whose stdin is /dev/null.
var ErrNoInput = errors.New("this session's stdin is /dev/null (start it with tty:true to type into it)")

// Session is one command the Manager runs: its output (the newest bytes in memory, all
// of them in a log file), its exit, and the means to type into it, signal and resize it.
type Session struct {
	ID      int
	Cmd     string
	TTY     bool
	Started time.Time
	LogPath string
	Pgid    int

	input  io.Writer                     // nil: stdin is /dev/null
	resize func(cols, rows uint16) error // nil without a terminal
	rows   int                           // the terminal's height, for rendering
	stop   func()                        // kills the process group and releases the terminal
	unread func() int                    // bytes of output not yet read

	mu       sync.Mutex
	out      ring
	changed  chan struct{} // closed (and replaced) at every change: new output, exit, settling
	exited   bool
	code     int
	exitErr  error
	timedOut bool
	ended    time.Time // when the session settled (finished)
	settled  bool      // exited and its output drained (or the grace passed)
	outEnded bool      // nothing holds the output open any more
	log      *os.File
	logged   int64
	logMax   int64
	logErr   error
	cursor   int64 // where the next read without since_offset starts
	waiting  int   // calls in Wait now
}

// State is a session's state at one moment.
type State struct {
	Total    int64 // bytes of output so far
	Exited   bool  // the command has exited and its output was drained (or its grace passed)
	Code     int   // exit code, 128+n for a death by signal n; meaningful once Exited
	TimedOut bool  // killed because its timeout_s passed
	Ended    time.Time
}

// State returns the session's state now.
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state()
}

func (s *Session) state() State {
	return State{Total: s.out.total, Exited: s.settled, Code: s.code, TimedOut: s.timedOut, Ended: s.ended}
}

// notify wakes every waiter; s.mu is held.
func (s *Session) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// append records output.
func (s *Session) append(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out.write(p)
	if s.log != nil && s.logErr == nil {
		n := int64(len(p))
		if s.logged+n > s.logMax {
			n = s.logMax - s.logged
		}
		if n > 0 {
			_, s.logErr = s.log.Write(p[:n])
			s.logged += n
		}
	}
	s.notify()
}

// pump copies the command's output into the session until it ends.
func (s *Session) pump(r io.Reader, done chan<- struct{}) {
	defer close(done)
	defer func() {
		s.mu.Lock()
		s.outEnded = true
		s.mu.Unlock()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			s.append(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// finish records the exit and, once the output has ended or the grace has passed,
// settles the session.
func (s *Session) finish(code int, err error, outDone <-chan struct{}) {
	s.mu.Lock()
	s.exited, s.code, s.exitErr = true, code, err
	s.notify()
	s.mu.Unlock()
	s.awaitOutput(outDone)
	s.mu.Lock()
	s.settled, s.ended = true, time.Now()
	if s.log != nil {
		_ = s.log.Sync()
	}
	s.notify()
	s.mu.Unlock()
}

// awaitOutput returns once the exited command's output has ended, or has been quiet for
// exitGrace and can be taken to have (shell.OutputOver).
func (s *Session) awaitOutput(outDone <-chan struct{}) {
	began := time.Now()
	t := time.NewTimer(exitGrace)
	defer t.Stop()
	last := s.State().Total
	for {
		select {
		case <-outDone:
			return
		case <-t.C:
		}
		total := s.State().Total
		if total == last && shell.OutputOver(s.Pgid, s.unread(), time.Since(began)) {
			return
		}
		last = total
		t.Reset(exitGrace)
	}
}

// Write types p into the session's terminal.
func (s *Session) Write(p []byte) error {
	if s.input == nil {
		return ErrNoInput
	}
	if s.State().Exited {
		return fmt.Errorf("session %d has exited", s.ID)
	}
	// A program that does not read its input fills the terminal's buffer (a few KB)
	// and would hold the call for ever.
	if d, ok := s.input.(interface{ SetWriteDeadline(time.Time) error }); ok {
		_ = d.SetWriteDeadline(time.Now().Add(writeTimeout))
		defer d.SetWriteDeadline(time.Time{})
	}
	n, err := s.input.Write(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("session %d is not reading its input: %d of %d bytes written in %s", s.ID, n, len(p), writeTimeout)
	}
	if err != nil {
		return fmt.Errorf("writing to session %d: %w", s.ID, err)
	}
	return nil
}

// Resize sets the window size of the session's terminal.
func (s *Session) Resize(cols, rows uint16) error {
	if s.resize == nil {
		return fmt.Errorf("session %d has no terminal (it was started with tty:false)", s.ID)
	}
	if err := s.resize(cols, rows); err != nil {
		return err
	}
	s.mu.Lock()
	s.rows = int(rows)
	s.mu.Unlock()
	return nil
}

// Signal sends sig to the session's whole process group. Once the command has been
// reaped and nothing holds its output open, the group is taken to be empty and is not
// signalled: its number may by then be another group's.
func (s *Session) Signal(sig syscall.Signal) error {
	if s.groupGone() {
		return nil
	}
	return shell.SignalGroup(s.Pgid, sig)
}

// groupGone reports whether the command has been reaped and nothing holds its output.
func (s *Session) groupGone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exited && s.outEnded
}

// Rows is the terminal's height (24 for a session without one).
func (s *Session) Rows() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rows
}

// LogStatus says how much of the output the log file holds, and why it stopped if it
// did (full at its cap, or a write error).
func (s *Session) LogStatus() (logged int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	err = s.logErr
	if err == nil && s.out.total > s.logged {
		err = fmt.Errorf("the log stopped at its cap of %d bytes", s.logMax)
	}
	return s.logged, err
}

// Output returns the raw output from offset from (or the oldest byte still in memory) to
// now, the offset it starts at and the state.
func (s *Session) Output(from int64) ([]byte, int64, State) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, start := s.out.since(from)
	return b, start, s.state()
}

// Cursor is where a read without an explicit offset starts: the end of the last read.
func (s *Session) Cursor() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cursor
}

// Waiting is how many calls wait on the session now. A cancelled call no longer counts
// once its wait has returned, so a caller can tell its cancellation has reached the
// session (list_sessions shows it).
func (s *Session) Waiting() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waiting
}

// Advance moves the cursor to to (never backwards).
func (s *Session) Advance(to int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cursor = max(s.cursor, to)
}

// WaitSpec says what Wait waits for.
type WaitSpec struct {
	From     int64     // output offset the wait looks at (for Until and OnOutput)
	Deadline time.Time // give up then (zero: only the exit or ctx ends the wait)
	// Until, if set, ends the wait when the rendered output since From matches. It is
	// matched against whole lines and the unfinished last one, from the start of the
	// line holding From.
	Until *regexp.Regexp
	// OnOutput, if set, receives raw output since From as it comes, at most every
	// ProgressEvery (the call's progress stream).
	OnOutput      func(raw []byte, total int64)
	ProgressEvery time.Duration
}

// WaitResult is how a wait ended.
type WaitResult struct {
	State
	Matched bool // Until matched
	wakes   int  // times the wait woke before it ended (tests: it is not a polling loop)
}

// Wait blocks until the session has exited (and its output settled), Until matches, the
// deadline passes or ctx is done (then it returns ctx's error; the command runs on). It
// is woken by the session's changes, never by polling. A wait whose ctx is done never
// reports an end, even when the session ended at the same moment: its caller is gone,
// and the output it would have read is left for the next read.
func (s *Session) Wait(ctx context.Context, w WaitSpec) (WaitResult, error) {
	s.mu.Lock()
	s.waiting++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.waiting--
		s.mu.Unlock()
	}()
	var deadline <-chan time.Time
	if !w.Deadline.IsZero() {
		t := time.NewTimer(time.Until(w.Deadline))
		defer t.Stop()
		deadline = t.C
	}
	scanFrom := w.From // Until looks from the start of the line holding this
	scanned := w.From  // output up to here has been matched
	var lastScan time.Time
	var scanDue <-chan time.Time
	sent := w.From // OnOutput has had everything before this
	var lastSent time.Time
	var progressDue <-chan time.Time
	sendProgress := func() {
		progressDue = nil
		b, start, st := s.Output(sent)
		if len(b) > 0 {
			w.OnOutput(b, st.Total)
			sent, lastSent = start+int64(len(b)), time.Now()
		}
	}
	wakes := 0
	for ; ; wakes++ {
		if err := ctx.Err(); err != nil {
			return WaitResult{State: s.State(), wakes: wakes}, err
		}
		s.mu.Lock()
		st, changed := s.state(), s.changed
		s.mu.Unlock()
		if w.OnOutput != nil && st.Total > sent {
			if wait := w.ProgressEvery - time.Since(lastSent); wait <= 0 || st.Exited {
				sendProgress()
			} else if progressDue == nil {
				progressDue = time.After(wait)
			}
		}
		if w.Until != nil && st.Total > scanned && !st.Exited && time.Since(lastScan) < scanEvery {
			// A flood wakes the wait per read; matching then is what costs (the line
			// it is in may be long), so it waits for the next scan time.
			if scanDue == nil {
				scanDue = time.After(scanEvery - time.Since(lastScan))
			}
		} else if w.Until != nil && st.Total > scanned {
			scanDue, lastScan, scanned = nil, time.Now(), st.Total
			b, start, _ := s.Output(scanFrom)
			if w.Until.MatchString(Render(b, s.Rows())) {
				if w.OnOutput != nil {
					sendProgress()
				}
				return WaitResult{State: st, Matched: true, wakes: wakes}, nil
			}
			if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
				scanFrom = start + int64(i) + 1
			}
		}
		if st.Exited {
			return WaitResult{State: st, wakes: wakes}, nil
		}
		select {
		case <-changed:
		case <-progressDue:
			sendProgress()
		case <-scanDue:
			scanDue = nil
		case <-deadline:
			if w.OnOutput != nil {
				sendProgress()
			}
			return WaitResult{State: s.State(), wakes: wakes}, nil
		case <-ctx.Done():
			return WaitResult{State: s.State(), wakes: wakes}, ctx.Err()
		}
	}
}
