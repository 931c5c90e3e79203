package jsonwire

import (
	"bytes"
	"io"
)

// LineReader reads newline-terminated messages. A short line is cut from a small
// buffer. A line longer than that buffer (a large write's content) is read straight into
// memory of its own, in reads as large as the pipe gives, so that its bytes cross once
// from the kernel into the memory they are handled in, instead of being copied through
// the small buffer, gathered in pieces and joined.
type LineReader struct {
	r          io.Reader
	buf        []byte // buf[start:end] is read and not yet returned
	start, end int
	err        error // of the last read, returned once the buffer is drained
	// hint is the length announced for the next long line (Announce): its memory is
	// then taken whole, at once.
	hint int
}

// lineBuffer is the small buffer's size; a long line is read into a first piece of
// longLineStart bytes, then pieces of longLinePiece (the pipe's size, as GrowPipe sets it).
const (
	lineBuffer    = 64 << 10
	longLineStart = 2 * lineBuffer
	longLinePiece = 1 << 20
)

func NewLineReader(r io.Reader) *LineReader {
	return &LineReader{r: r, buf: make([]byte, lineBuffer)}
}

// ReadLine returns the next line with its newline, or the rest of the input before the
// read error that ends it (and then that error again, on every later call). A line is its own memory, never reused by the reader. A line
// longer than max+1 bytes (its newline included) is consumed to its end and reported as
// tooLong, without being held.
func (l *LineReader) ReadLine(max int) (line []byte, tooLong bool, err error) {
	for {
		if i := bytes.IndexByte(l.buf[l.start:l.end], '\n'); i >= 0 {
			l.hint = 0 // announced for a long line, and this one is short
			return l.take(i+1, max)
		}
		if l.err != nil {
			// The error stays: whoever reads next meets it too.
			line, tooLong, _ = l.take(l.end-l.start, max)
			return line, tooLong, l.err
		}
		if l.end-l.start == len(l.buf) {
			return l.readLong(max)
		}
		if l.start > 0 {
			l.end = copy(l.buf, l.buf[l.start:l.end])
			l.start = 0
		}
		n, err := l.r.Read(l.buf[l.end:])
		l.end += n
		l.err = err
	}
}

// take returns the next n buffered bytes as a line of its own.
func (l *LineReader) take(n, max int) ([]byte, bool, error) {
	b := l.buf[l.start : l.start+n]
	l.start += n
	if n > max+1 {
		return nil, true, nil
	}
	return bytes.Clone(b), false, nil
}

// readLong continues a line that fills the small buffer: what was read moves to a piece
// of the line's own, and the rest is read straight into pieces, until the newline; what
// is read past it goes back to the small buffer. A line that ends in its first piece is
// that piece (of the announced size, if any); a longer one is joined once at its exact
// size. (Growing one buffer by
// doubling instead copies and touches three times the line's size.)
func (l *LineReader) readLong(max int) ([]byte, bool, error) {
	first := longLineStart
	if h := l.hint; h > l.end-l.start && h <= max+1 {
		first = h
	}
	l.hint = 0
	piece := make([]byte, 0, first)
	piece = append(piece, l.buf[l.start:l.end]...)
	l.start, l.end = 0, 0
	var pieces [][]byte
	total := len(piece) // bytes in pieces and piece
	for {
		if total > max+1 {
			return l.discard(max)
		}
		if len(piece) == cap(piece) {
			pieces = append(pieces, piece)
			piece = make([]byte, 0, longLinePiece)
		}
		n, err := l.r.Read(piece[len(piece):cap(piece)])
		i := bytes.IndexByte(piece[len(piece):len(piece)+n], '\n')
		piece = piece[:len(piece)+n]
		total += n
		if i < 0 && err == nil {
			continue
		}
		if i < 0 {
			l.err = err // the line ends with the input
		}
		end := len(piece) // the line's end in piece
		if i >= 0 {
			end = len(piece) - n + i + 1
			rest := piece[end:]
			if len(rest) > len(l.buf) {
				l.buf = make([]byte, len(rest))
			}
			l.end = copy(l.buf, rest)
			l.err = err
			err = nil
			total -= len(rest)
		}
		if total > max+1 {
			return nil, true, err
		}
		if pieces == nil {
			return piece[:end:end], false, err
		}
		// bytes.Join does not zero the memory it then fills.
		return bytes.Join(append(pieces, piece[:end]), nil), false, err
	}
}

// discard consumes the rest of a line too long to keep, up to and with its newline.
func (l *LineReader) discard(max int) ([]byte, bool, error) {
	for {
		if i := bytes.IndexByte(l.buf[l.start:l.end], '\n'); i >= 0 {
			l.start += i + 1
			return nil, true, nil
		}
		l.start, l.end = 0, 0
		if l.err != nil {
			return nil, true, l.err
		}
		n, err := l.r.Read(l.buf)
		l.end, l.err = n, err
	}
}

// Announce gives the length of the next line, its newline included, as a client
// announced it (a long write's request): that line's memory is then taken whole, at
// once, instead of in pieces joined after. A wrong length costs only the pieces.
func (l *LineReader) Announce(n int) { l.hint = n }

// Announced is the length announced for the next line (0: none).
func (l *LineReader) Announced() int { return l.hint }
