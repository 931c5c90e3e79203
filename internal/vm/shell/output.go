package shell

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/truncate"
)

// output accumulates a command's output as pi 1.6.0's OutputAccumulator does, with
// bounded memory: it counts lines and bytes of the decoded text, keeps only a rolling
// tail of it for display, and once the output is over the limits streams every raw byte
// (including what came before) to a full-output file.
type output struct {
	maxLines, maxBytes int
	rolling            int // bytes of decoded tail kept after a trim (pi: 2 × maxBytes)
	dir, prefix        string

	dec             utf8Decoder
	early           []byte // raw bytes seen before the file was needed (≤ maxBytes + a chunk)
	tail            []byte // decoded tail, trimmed to rolling bytes when over 2 × rolling
	tailAtLineStart bool   // the tail begins at the start of a line
	totalRaw        int
	totalDecoded    int
	completedLines  int
	lineBytes       int // decoded bytes of the unfinished last line
	openLine        bool

	freshMax int    // > 0: also keep up to this much decoded text not yet taken
	fresh    []byte // decoded text since the last takeFresh

	file    *os.File
	path    string
	fileErr error // first failure creating or writing the file
}

func newOutput(dir, prefix string) *output {
	return &output{
		maxLines:        truncate.DefaultMaxLines,
		maxBytes:        truncate.DefaultMaxBytes,
		rolling:         2 * truncate.DefaultMaxBytes,
		dir:             dir,
		prefix:          prefix,
		tailAtLineStart: true,
	}
}

// append takes one raw chunk of output.
func (o *output) append(raw []byte) {
	o.totalRaw += len(raw)
	o.appendDecoded(o.dec.decode(raw))
	if o.file != nil || o.overLimits() {
		o.ensureFile()
		o.write(raw)
	} else {
		o.early = append(o.early, raw...)
	}
}

// finish ends the stream: a dangling partial character is decoded and the file is
// created if the output ended up over the limits.
func (o *output) finish() {
	o.appendDecoded(o.dec.flush())
	if o.overLimits() {
		o.ensureFile()
	}
}

// close closes the full-output file and reports the first error it had.
func (o *output) close() error {
	if o.file != nil {
		if err := o.file.Close(); err != nil && o.fileErr == nil {
			o.fileErr = fmt.Errorf("closing full output file: %w", err)
		}
		o.file = nil
	}
	return o.fileErr
}

func (o *output) appendDecoded(text []byte) {
	if len(text) == 0 {
		return
	}
	o.totalDecoded += len(text)
	o.tail = append(o.tail, text...)
	if len(o.tail) > 2*o.rolling {
		o.trimTail()
	}
	if o.freshMax > 0 {
		o.fresh = append(o.fresh, text...)
		if len(o.fresh) > 2*o.freshMax {
			n := copy(o.fresh, keepLast(o.fresh, o.freshMax))
			o.fresh = o.fresh[:n]
		}
	}
	if n := bytes.Count(text, []byte{'\n'}); n == 0 {
		o.lineBytes += len(text)
		o.openLine = true
	} else {
		o.completedLines += n
		o.lineBytes = len(text) - bytes.LastIndexByte(text, '\n') - 1
		o.openLine = o.lineBytes > 0
	}
}

// takeFresh returns the decoded text since the previous call (at most freshMax bytes,
// the newest) and forgets it.
func (o *output) takeFresh() []byte {
	f := keepLast(o.fresh, o.freshMax)
	o.fresh = o.fresh[:0]
	return f
}

// trimTail keeps the last rolling bytes of the tail, starting on a character boundary.
func (o *output) trimTail() {
	start := len(o.tail) - len(keepLast(o.tail, o.rolling))
	if start > 0 {
		o.tailAtLineStart = o.tail[start-1] == '\n'
	}
	n := copy(o.tail, o.tail[start:])
	o.tail = o.tail[:n]
}

// keepLast returns the last max bytes of b (fewer, to start on a character boundary).
func keepLast(b []byte, max int) []byte {
	start := len(b) - max
	if start <= 0 {
		return b
	}
	for start < len(b) && b[start]&0xC0 == 0x80 {
		start++
	}
	return b[start:]
}

func (o *output) totalLines() int {
	if o.openLine {
		return o.completedLines + 1
	}
	return o.completedLines
}

func (o *output) overLimits() bool {
	return o.totalRaw > o.maxBytes || o.totalDecoded > o.maxBytes || o.totalLines() > o.maxLines
}

// snapshot is the display state at one moment.
type snapshot struct {
	truncation truncate.Result
	path       string // full-output file, "" if none
	saveErr    error  // why the full output could not be saved, if it could not
}

// snapshot tail-truncates what is kept, with the totals of everything seen. persist
// creates the full-output file when the output is truncated.
func (o *output) snapshot(persist bool) snapshot {
	text := o.tail
	if !o.tailAtLineStart {
		// The tail starts mid-line: drop that partial line, unless it is all there is.
		if i := bytes.IndexByte(text, '\n'); i >= 0 && i+1 < len(text) {
			text = text[i+1:]
		}
	}
	t := truncate.Tail(string(text), truncate.Options{MaxLines: o.maxLines, MaxBytes: o.maxBytes})
	t.Truncated = o.totalLines() > o.maxLines || o.totalDecoded > o.maxBytes
	switch {
	case !t.Truncated:
		t.TruncatedBy = nil
	case t.TruncatedBy == nil:
		by := "lines"
		if o.totalDecoded > o.maxBytes {
			by = "bytes"
		}
		t.TruncatedBy = &by
	}
	t.TotalLines, t.TotalBytes = o.totalLines(), o.totalDecoded
	if persist && t.Truncated {
		o.ensureFile()
	}
	return snapshot{truncation: t, path: o.path}
}

// ensureFile creates the full-output file ($TMPDIR/<prefix>-<16 hex>.log, mode 0600,
// never an existing path) and writes the output seen so far into it.
func (o *output) ensureFile() {
	if o.path != "" {
		return
	}
	var r [8]byte
	rand.Read(r[:]) // never fails (crypto/rand panics rather than return short)
	o.path = filepath.Join(o.dir, o.prefix+"-"+hex.EncodeToString(r[:])+".log")
	f, err := os.OpenFile(o.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		o.fileErr = fmt.Errorf("creating full output file: %w", err)
		return
	}
	o.file = f
	o.write(o.early)
	o.early = nil
}

func (o *output) write(p []byte) {
	if o.file == nil || o.fileErr != nil || len(p) == 0 {
		return
	}
	if _, err := o.file.Write(p); err != nil {
		o.fileErr = fmt.Errorf("writing full output file: %w", err)
	}
}

// tmpDir is Node's os.tmpdir() on Unix, which pi uses for the full-output file.
func tmpDir() string {
	dir := os.Getenv("TMPDIR")
	if dir == "" {
		dir = os.Getenv("TMP")
	}
	if dir == "" {
		dir = os.Getenv("TEMP")
	}
	if dir == "" {
		dir = "/tmp"
	}
	if len(dir) > 1 && dir[len(dir)-1] == '/' {
		dir = dir[:len(dir)-1]
	}
	return dir
}
