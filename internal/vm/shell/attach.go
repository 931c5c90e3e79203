package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	xterm "golang.org/x/term"
)

// AttachOptions are how AttachPty connects a command's pseudo-terminal to this process.
type AttachOptions struct {
	Dir string    // working directory ("" = the current one)
	In  io.Reader // read only when Interactive; a terminal goes into raw mode
	Out io.Writer // the terminal's output
	// Interactive forwards In to the command; without it the command reads nothing.
	Interactive bool
}

// AttachPty runs argv under a pseudo-terminal attached to In and Out, as docker exec -t:
// with Interactive and a terminal on In, that terminal goes into raw mode so every key
// reaches the command; the pty's window size follows In's or Out's terminal. It returns
// the command's exit status (128+n after signal n).
func AttachPty(ctx context.Context, argv []string, o AttachOptions) (int, error) {
	inFile, _ := o.In.(*os.File)
	outFile, _ := o.Out.(*os.File)
	sizeFrom := -1 // the descriptor whose window size the pty copies
	switch {
	case inFile != nil && xterm.IsTerminal(int(inFile.Fd())):
		sizeFrom = int(inFile.Fd())
	case outFile != nil && xterm.IsTerminal(int(outFile.Fd())):
		sizeFrom = int(outFile.Fd())
	}
	var cols, rows uint16
	if sizeFrom >= 0 {
		if w, h, err := xterm.GetSize(sizeFrom); err == nil {
			cols, rows = uint16(w), uint16(h)
		}
	}
	sess, err := StartPty(ctx, argv, PtyOptions{Dir: o.Dir, Cols: cols, Rows: rows})
	if err != nil {
		return 0, err
	}
	defer sess.Close()

	if o.Interactive && inFile != nil && xterm.IsTerminal(int(inFile.Fd())) {
		old, err := xterm.MakeRaw(int(inFile.Fd()))
		if err != nil {
			return 0, fmt.Errorf("raw mode: %w", err)
		}
		defer xterm.Restore(int(inFile.Fd()), old)
	}
	if sizeFrom >= 0 {
		winch := make(chan os.Signal, 1)
		signal.Notify(winch, syscall.SIGWINCH)
		defer signal.Stop(winch)
		go func() {
			for {
				select {
				case <-winch:
					if w, h, err := xterm.GetSize(sizeFrom); err == nil {
						_ = sess.Resize(uint16(w), uint16(h))
					}
				case <-sess.Done():
					return
				}
			}
		}()
	}
	if o.Interactive {
		fromTerminal := inFile != nil && xterm.IsTerminal(int(inFile.Fd()))
		go func() { _ = copyInput(sess, o.In, !fromTerminal) }() // ends with our process
	}
	copied := make(chan error, 1)
	out := &watched{w: o.Out}
	go func() {
		_, err := ioCopy(out, sess)
		copied <- err
	}()
	code, err := sess.Wait()
	// Output normally ends (EIO) as the command exits; a background process that keeps
	// the terminal open must not keep us once it has been quiet a while.
	exited := time.Now()
	t := time.NewTimer(time.Second)
	defer t.Stop()
	for last := out.written.Load(); ; last = out.written.Load() {
		select {
		case <-copied:
			return code, err
		case <-t.C:
		}
		quiet := out.written.Load() == last && out.writing.Load() == 0
		if quiet && OutputOver(sess.Pgid(), sess.Pending(), time.Since(exited)) {
			return code, err
		}
		t.Reset(time.Second)
	}
}

// watched is a writer that tells whether a write is under way (a slow reader of Out
// holds the output's last bytes) and how much was written.
type watched struct {
	w       io.Writer
	writing atomic.Int32
	written atomic.Int64
}

func (w *watched) Write(p []byte) (int, error) {
	w.writing.Add(1)
	defer w.writing.Add(-1)
	n, err := w.w.Write(p)
	w.written.Add(int64(n))
	return n, err
}

// copyInput forwards keystrokes until either side ends. Input that is not a terminal
// (a pipe, a file) ends with ^D, which is how a terminal says end of input: one after a
// complete line, two to first hand over a partial one.
func copyInput(dst *Pty, src io.Reader, sendEOF bool) error {
	last := &lastByte{w: dst, b: '\n'}
	_, err := ioCopy(last, src)
	if err != nil {
		if errors.Is(err, os.ErrClosed) {
			return nil
		}
		return err
	}
	if !sendEOF {
		return nil
	}
	eof := "\x04"
	if last.b != '\n' {
		eof = "\x04\x04"
	}
	_, err = dst.Write([]byte(eof))
	return err
}

// lastByte remembers the last byte written through it.
type lastByte struct {
	w io.Writer
	b byte
}

func (l *lastByte) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	if n > 0 {
		l.b = p[n-1]
	}
	return n, err
}

// ioCopy is io.Copy with a small buffer, so interactive output is not held back.
func ioCopy(dst io.Writer, src io.Reader) (int64, error) {
	return io.CopyBuffer(dst, src, make([]byte, 32<<10))
}
