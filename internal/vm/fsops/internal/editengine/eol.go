package editengine

import (
	"bufio"
	"bytes"
	"io"
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/fileio"
)

// Line endings of an edited file with CRs. pi matches edits in the LF-normalized text
// and writes the result back with the original's endings (applyToOriginal). Keeping the
// original next to its normalized copy doubles what a large edit holds, so the bytes
// read are normalized in place instead, and each line feed's original ending is kept in
// two bits (lineEndings); the original is written back from these.

// A line ending as the original had it.
const (
	eolLF   = 0 // "\n"
	eolCRLF = 1 // "\r\n"
	eolCR   = 2 // a lone "\r"
)

// lineEndings holds one ending kind per "\n" of the normalized text, four to a byte.
type lineEndings struct {
	packed []byte
	n      int
	anyCR  bool // some ending is a lone CR
	anyLF  bool // some ending has a "\n" (LF or CRLF) in the original
}

func (e *lineEndings) add(kind byte) {
	if e.n%4 == 0 {
		e.packed = append(e.packed, 0)
	}
	e.packed[e.n/4] |= kind << (2 * (e.n % 4))
	e.n++
	switch kind {
	case eolCR:
		e.anyCR = true
	default:
		e.anyLF = true
	}
}

func (e *lineEndings) kind(i int) byte { return e.packed[i/4] >> (2 * (i % 4)) & 3 }

var eolBytes = [3]string{eolLF: "\n", eolCRLF: "\r\n", eolCR: "\r"}

// normalizeInPlace turns CRLF and lone CR into LF in b, as normalizeToLF does, and
// returns the shortened b with the endings it replaced.
func normalizeInPlace(b []byte) ([]byte, *lineEndings) {
	e := &lineEndings{}
	w := 0
	for r := 0; r < len(b); {
		i := bytes.IndexAny(b[r:], "\r\n")
		if i < 0 {
			w += copy(b[w:], b[r:])
			break
		}
		w += copy(b[w:], b[r:r+i])
		r += i
		switch {
		case b[r] == '\n':
			e.add(eolLF)
			r++
		case r+1 < len(b) && b[r+1] == '\n':
			e.add(eolCRLF)
			r += 2
		default:
			e.add(eolCR)
			r++
		}
		b[w] = '\n'
		w++
	}
	return b[:w], e
}

// originalWriter writes the original form of normalized text: every "\n" becomes the
// ending the original had there. Calls must come in order of the text.
type originalWriter struct {
	w    *bufio.Writer
	e    *lineEndings
	line int // index of the next "\n" to write
}

func (o *originalWriter) write(s string) {
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			o.w.WriteString(s)
			return
		}
		o.w.WriteString(s[:i])
		o.w.WriteString(eolBytes[o.e.kind(o.line)])
		o.line++
		s = s[i+1:]
	}
}

// lineEndingAt is lineEndingAt(original, toOriginal(off)) in terms of the normalized
// text, line being the number of "\n" before off: the first ending with a "\n" at or
// after off, else the last one before it, else CR if the file has any, else LF.
func (e *lineEndings) lineEndingAt(line int) string {
	if !e.anyLF {
		if e.anyCR {
			return "\r"
		}
		return "\n"
	}
	for i := line; i < e.n; i++ {
		if k := e.kind(i); k != eolCR {
			return eolBytes[k]
		}
	}
	for i := min(line, e.n) - 1; i >= 0; i-- {
		if k := e.kind(i); k != eolCR {
			return eolBytes[k]
		}
	}
	if e.anyCR {
		return "\r"
	}
	return "\n"
}

// writeOriginal writes what applyToOriginal(original, reps) returns — the replacements
// matched in the normalized text applied to the original — from the normalized text and
// the original's endings, after prefix, through a buffer into dst; size is about what
// it writes, and bounds the buffer.
func writeOriginal(dst io.Writer, prefix, normalized string, e *lineEndings, reps []replacement, size int) error {
	w := bufio.NewWriterSize(dst, min(max(size, 4096), 1<<20))
	o := originalWriter{w: w, e: e}
	w.WriteString(prefix)
	endsWithCR := false
	// A CR before a seam and an LF after it would merge into one CRLF; pi adds an LF so
	// the file has the line breaks the diff shows.
	original := func(from, to int) {
		if from >= to {
			return
		}
		seg := normalized[from:to]
		first := seg[0]
		if first == '\n' {
			first = eolBytes[e.kind(o.line)][0]
		}
		if endsWithCR && first == '\n' {
			w.WriteByte('\n')
		}
		o.write(seg)
		last := seg[len(seg)-1]
		if last == '\n' {
			end := eolBytes[e.kind(o.line-1)]
			last = end[len(end)-1]
		}
		endsWithCR = last == '\r'
	}
	inserted := func(part string) {
		if part == "" {
			return
		}
		if endsWithCR && part[0] == '\n' {
			w.WriteByte('\n')
		}
		w.WriteString(part)
		endsWithCR = part[len(part)-1] == '\r'
	}
	pos := 0
	for _, r := range reps {
		original(pos, r.index)
		// o.line is now the number of "\n" before r.index.
		if ending := e.lineEndingAt(o.line); ending == "\n" {
			inserted(r.newText)
		} else {
			inserted(strings.ReplaceAll(r.newText, "\n", ending))
		}
		o.line += strings.Count(normalized[r.index:r.index+r.length], "\n")
		pos = r.index + r.length
	}
	original(pos, len(normalized))
	if err := w.Flush(); err != nil {
		return fileio.NodeErr(err, "write", "")
	}
	return nil
}
