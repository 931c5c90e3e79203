package fsops

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"unicode/utf8"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/fileio"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/truncate"
)

// readChunkSize is how much of a file read holds at a time.
const readChunkSize = 64 * 1024

// chunkSize is the read buffer for a file of size bytes (0: unknown): a small file is
// read in one go without a 64 KB buffer.
func chunkSize(size int64) int {
	if size <= 0 || size >= readChunkSize {
		return readChunkSize
	}
	return int(max(size+1, 512))
}

// lineSelection is what read shows of lines [start, end) of a file: pi's
// selectLinesFromStream result.
type lineSelection struct {
	totalFileLines int64 // "\n"-separated lines, so a trailing newline adds an empty one
	trunc          truncate.Result
	firstLineBytes int64 // decoded size of the first selected line
}

// lineSelector keeps only the selected lines truncate.Head could show; the others are
// counted, so memory stays bounded whatever the size of the file or of one line.
type lineSelector struct {
	start, end int64 // selected line indexes, end exclusive

	line int64 // index of the line being read
	// stored is the stored lines joined by "\n", the one being read last (from curStart):
	// one buffer, not a string per line.
	stored         []byte
	storedLines    int
	curStart       int
	storedPastCaps bool
	selectedLines  int64
	selectedBytes  int64
	firstLineBytes int64
	lastLineEmpty  bool

	// The selected line being read; its stored prefix (only up to just over the byte
	// cap) is stored[curStart:].
	storing  bool
	lineLen  int64 // its decoded size
	hasText  bool
	carry    []byte // an incomplete UTF-8 sequence from the previous piece
	scratch  []byte
	selected bool
}

func newLineSelector(start, end int64) *lineSelector {
	s := &lineSelector{start: start, end: end, lastLineEmpty: true, storing: true}
	s.selected = s.line >= s.start && s.line < s.end
	s.beginLine()
	return s
}

// beginLine starts storing the line now being read, if it is selected and stored.
func (s *lineSelector) beginLine() {
	if !s.selected || !s.storing {
		return
	}
	if s.storedLines > 0 {
		s.stored = append(s.stored, '\n')
	}
	s.curStart = len(s.stored)
}

// curLen is the stored length of the line being read.
func (s *lineSelector) curLen() int { return len(s.stored) - s.curStart }

// selectLines reads r to the end and returns the selection of lines [start, end).
func selectLines(ctx context.Context, r io.Reader, start, end int64, size int64) (lineSelection, error) {
	s := newLineSelector(start, end)
	buf := make([]byte, chunkSize(size))
	for {
		if ctx.Err() != nil {
			return lineSelection{}, fileio.ErrAborted
		}
		n, err := r.Read(buf)
		s.feed(buf[:n])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return lineSelection{}, fileio.NodeErr(err, "read", "")
		}
	}
	return s.finish(), nil
}

// feed consumes one chunk of the file.
func (s *lineSelector) feed(chunk []byte) {
	for len(chunk) > 0 {
		if s.line >= s.end {
			// Past the selection: only count lines.
			s.line += int64(bytes.Count(chunk, []byte{'\n'}))
			return
		}
		nl := bytes.IndexByte(chunk, '\n')
		seg := chunk
		if nl >= 0 {
			seg = chunk[:nl]
		}
		if s.selected && len(seg) > 0 {
			s.appendToLine(seg, false)
		}
		if nl < 0 {
			return
		}
		if s.selected {
			s.finishLine()
		}
		s.line++
		s.selected = s.line >= s.start && s.line < s.end
		s.beginLine()
		chunk = chunk[nl+1:]
	}
}

func (s *lineSelector) appendToLine(seg []byte, final bool) {
	s.hasText = s.hasText || len(seg) > 0
	if len(s.carry) == 0 && !final && utf8.Valid(seg) {
		// Fast path: valid text decodes to itself.
		s.lineLen += int64(len(seg))
		if s.storing && s.curLen() <= truncate.DefaultMaxBytes {
			s.stored = append(s.stored, seg...)
		}
		return
	}
	in := seg
	if len(s.carry) > 0 {
		in = append(append([]byte{}, s.carry...), seg...)
	}
	var text []byte
	text, s.carry = appendLossy(s.scratch[:0], in, final)
	s.scratch = text[:0]
	s.lineLen += int64(len(text))
	if s.storing && s.curLen() <= truncate.DefaultMaxBytes {
		s.stored = append(s.stored, text...)
	}
}

func (s *lineSelector) finishLine() {
	if len(s.carry) > 0 {
		s.appendToLine(nil, true)
	}
	if s.storing {
		if s.selectedLines == 0 {
			s.firstLineBytes = s.lineLen
		}
		// Storing goes on one line past the caps: truncate.Head drops a trailing empty
		// line, so the line after the caps must be there for it to decide as for the
		// whole text.
		// (stored up to the line before this one: len(stored) less this line and its
		// separator.)
		before := s.curStart
		if s.storedLines > 0 {
			before--
		}
		if s.storedLines > truncate.DefaultMaxLines || before > truncate.DefaultMaxBytes {
			s.storedPastCaps = true
		}
		s.storedLines++
	}
	if s.selectedLines > 0 {
		s.selectedBytes++ // the "\n" joining it to the previous selected line
	}
	s.selectedBytes += s.lineLen
	s.selectedLines++
	s.lastLineEmpty = !s.hasText
	s.storing = !s.storedPastCaps
	s.lineLen, s.hasText = 0, false
}

func (s *lineSelector) finish() lineSelection {
	if s.selected {
		s.finishLine()
	}
	tr := truncate.Head(string(s.stored), truncate.Options{})
	// Head's counts cover only the stored lines; pi reports the whole selection's.
	tr.TotalBytes = int(s.selectedBytes)
	switch {
	case s.selectedBytes == 0:
		tr.TotalLines = 0
	case s.lastLineEmpty:
		tr.TotalLines = int(s.selectedLines - 1)
	default:
		tr.TotalLines = int(s.selectedLines)
	}
	return lineSelection{totalFileLines: s.line + 1, trunc: tr, firstLineBytes: s.firstLineBytes}
}

// sliceBounds applies JavaScript's Array.prototype.slice(start, end) index rules to a
// list of n items: fractions truncate toward zero, negatives count from the end.
func sliceBounds(start, end float64, n int64) (int64, int64) {
	clamp := func(x float64) int64 {
		x = math.Trunc(x)
		if x < 0 {
			x = math.Max(0, float64(n)+x)
		}
		return int64(math.Min(x, float64(n)))
	}
	return clamp(start), clamp(end)
}
