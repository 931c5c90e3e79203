package grepmatch

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"syscall"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/fileio"
)

// Line is one line ripgrep would report for a file: a match or a context line.
type Line struct {
	Number int
	Match  bool
	Text   []byte // without the line terminator; only a prefix when cut
	Cut    bool   // text is the first keptLineBytes bytes of a longer line
}

// keptLineBytes is how much of a line grep keeps. pi shows at most 500 UTF-16 units of
// a line; one unit takes at most 3 bytes of UTF-8 (or of an invalid sequence), so any
// longer line is cut by pi anyway and its first 500 units lie within these bytes.
const keptLineBytes = 2048

// BufferSize is ripgrep's initial read buffer; binary detection works per buffer fill.
const BufferSize = 64 * 1024

// searchableEnd emulates ripgrep's binary detection for a file it found while walking a
// directory: it reads in buffer fills and stops, without searching that fill, at the
// first fill holding a NUL byte. The returned prefix (whole lines only) is what ripgrep
// searched; 0 means the file is skipped as binary.
func searchableEnd(data []byte) int {
	nul := bytes.IndexByte(data, 0)
	if nul < 0 {
		return len(data)
	}
	capacity, end, lastTerm := BufferSize, 0, 0
	for {
		free := capacity - (end - lastTerm)
		if free == 0 {
			capacity *= 3 // the buffer grows by twice its length when a line fills it
			continue
		}
		n := min(free, len(data)-end)
		if nul < end+n {
			return lastTerm
		}
		if i := bytes.LastIndexByte(data[end:end+n], '\n'); i >= 0 {
			lastTerm = end + i + 1
		}
		end += n
		if n == 0 {
			return len(data)
		}
	}
}

// decodeBOM applies ripgrep's BOM sniffing: a UTF-8 BOM is dropped and UTF-16 text with
// a BOM is transcoded to UTF-8; anything else is searched as raw bytes.
func decodeBOM(data []byte) []byte {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		return data[3:]
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
		return utf16ToUTF8(data[2:], false)
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		return utf16ToUTF8(data[2:], true)
	}
	return data
}

func utf16ToUTF8(b []byte, bigEndian bool) []byte {
	units := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		if bigEndian {
			units = append(units, uint16(b[i])<<8|uint16(b[i+1]))
		} else {
			units = append(units, uint16(b[i+1])<<8|uint16(b[i]))
		}
	}
	out := make([]byte, 0, len(units))
	for _, r := range utf16.Decode(units) {
		out = utf8.AppendRune(out, r)
	}
	if len(b)%2 == 1 {
		out = append(out, "\uFFFD"...)
	}
	return out
}

// MmapThreshold is the size from which grep maps a file instead of reading it, so a
// multi-gigabyte file costs address space, not heap.
const MmapThreshold = 8 << 20

// SearchFile loads and searches one file with ripgrep's BOM handling; walked files also
// get its binary-file detection (a file named explicitly is searched whole, as ripgrep
// does). The file is name in the open directory dir when dir is set, else path. It
// returns the lines (copied out of the file's memory) and the read buffer for reuse.
//
// Of a file that is not a regular one (a device, FIFO or socket, which may never end)
// at most fileio.StreamCap bytes are read: when it goes on past them, the lines found
// there are the answer only if they hold maxMatches matches (all the caller wants);
// otherwise the search fails with a *fileio.StreamTooLongError.
func SearchFile(ctx context.Context, dir *fileio.Dir, name, path string, walked bool, p *Pattern, ctxLines, maxMatches int, buf []byte) (lines []Line, _ []byte, err error) {
	data, unmap, cut, buf, err := loadFile(ctx, dir, name, path, buf, walked)
	if err != nil {
		return nil, buf, err
	}
	if unmap != nil {
		defer unmap()
		// A mapped file truncated under us faults on access: make that an error.
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if r := recover(); r != nil {
				lines, err = nil, fmt.Errorf("%s: file changed while being searched", path)
			}
		}()
	}
	text := decodeBOM(data)
	if walked {
		text = text[:searchableEnd(text)]
	}
	lines = fileSearch(ctx, p, text, ctxLines, maxMatches)
	if cut && countMatches(lines) < maxMatches {
		return nil, buf, &fileio.StreamTooLongError{Path: path}
	}
	for i := range lines { // the buffer is reused and the mapping released: keep copies
		t := lines[i].Text
		if len(t) > keptLineBytes {
			t, lines[i].Cut = t[:keptLineBytes], true
		}
		lines[i].Text = append([]byte(nil), t...)
	}
	if cap(buf) > 4<<20 {
		buf = nil // do not pin a big buffer for the rest of the walk
	}
	return lines, buf, nil
}

// loadFile returns the content of path: mapped (with its unmap function) when large,
// else read into buf, which it may grow. It uses raw system calls: os.File's poller
// registration costs several extra calls per file, a quarter of a tree search. With
// sniff (ripgrep's binary detection applies) a file longer than one buffer fill is
// read one fill first, and only that fill is returned when it makes the file binary:
// ripgrep stops there too, and the Go tree alone has 14 MB of such files past it.
// A file without a size (not a regular file) is read up to fileio.StreamCap bytes;
// cut tells that it went on past them.
func loadFile(ctx context.Context, dir *fileio.Dir, name, path string, buf []byte, sniff bool) (data []byte, unmap func(), cut bool, _ []byte, err error) {
	var fd int
	if dir != nil {
		fd, err = fileio.OpenInDir(dir, name)
	} else {
		fd, err = openRead(path)
	}
	if err != nil {
		return nil, nil, false, buf, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	size := -1
	if sz, regular := fileio.FdSize(fd); regular && sz < 1<<40 {
		size = int(sz)
	}
	if size >= MmapThreshold {
		if m, err := syscall.Mmap(fd, 0, size, syscall.PROT_READ, syscall.MAP_SHARED); err == nil {
			return m, func() { syscall.Munmap(m) }, false, buf, nil
		}
	}
	if size < 0 && cap(buf) <= fileio.StreamCap {
		// The most it may hold, at once: memory it never reads into stays untouched,
		// where growing by append would leave several times the cap as garbage.
		buf = make([]byte, 0, fileio.StreamCap+1)
	}
	if cap(buf) < size+1 {
		// Grown geometrically: a walk meets ever bigger files, and each new buffer is
		// zeroed by the allocator.
		buf = make([]byte, 0, max(size+512, 2*cap(buf), 64<<10))
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		end := cap(buf)
		if size < 0 {
			if len(buf) > fileio.StreamCap {
				return buf[:fileio.StreamCap], nil, true, buf, nil
			}
			if ctx.Err() != nil {
				return nil, nil, false, buf, ctx.Err()
			}
			end = min(end, fileio.StreamCap+1)
		}
		sniffing := sniff && size > BufferSize && len(buf) < BufferSize
		if sniffing {
			end = BufferSize // cap(buf) > size
		}
		n, err := syscall.Read(fd, buf[len(buf):end])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, nil, false, buf, &os.PathError{Op: "read", Path: path, Err: err}
		}
		buf = buf[:len(buf)+n]
		if n == 0 || len(buf) == size {
			// Stopping at the size fstat reported saves a read per file; a file
			// growing meanwhile is searched as it was.
			return buf, nil, false, buf, nil
		}
		if sniffing && len(buf) == BufferSize && binaryFirstFill(buf) {
			return buf, nil, false, buf, nil
		}
	}
}

// binaryFirstFill reports whether a file starting with the buffer fill head has
// nothing ripgrep would search when walking (searchableEnd is 0 whatever follows): the
// fill holds a NUL byte, and no UTF-16 BOM makes it text to transcode first (a UTF-8
// BOM only moves the fill 3 bytes on, past a NUL that is still in it).
func binaryFirstFill(head []byte) bool {
	if bytes.HasPrefix(head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(head, []byte{0xFE, 0xFF}) {
		return false
	}
	return bytes.IndexByte(head, 0) >= 0
}

func countMatches(lines []Line) int {
	n := 0
	for _, l := range lines {
		if l.Match {
			n++
		}
	}
	return n
}

func openRead(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// fileSearch finds the lines ripgrep would print for one file with --context ctxLines:
// every matching line and the union of the context windows around them. It stops
// collecting once maxMatches matches are found and the context after them is complete.
// A cancelled ctx ends the search early (the caller discards the result).
func fileSearch(ctx context.Context, p *Pattern, data []byte, ctxLines, maxMatches int) []Line {
	var out []Line
	cands := newCandidates(ctx, p)
	lineNo := 1  // line number at offset pos
	pos := 0     // scanning position, always at a line start
	emitted := 0 // highest line number already in out
	emittedEnd := 0
	matches := 0
	for pos <= len(data) && matches < maxMatches {
		ms, ok := nextMatchLine(p, cands, data, pos)
		if !ok {
			break
		}
		lineNo += bytes.Count(data[pos:ms], []byte{'\n'})
		me := lineEnd(data, ms)
		// Context before: up to ctxLines lines, but never lines already emitted.
		if ctxLines > 0 {
			first := max(emitted+1, lineNo-ctxLines)
			var before []Line
			s := ms
			for n := lineNo - 1; n >= first; n-- {
				e := s - 1 // the '\n' ending line n
				s = bytes.LastIndexByte(data[:e], '\n') + 1
				before = append(before, Line{Number: n, Text: data[s:e]})
			}
			for i := len(before) - 1; i >= 0; i-- {
				out = append(out, before[i])
			}
		}
		out = append(out, Line{Number: lineNo, Match: true, Text: data[ms:me]})
		matches++
		emitted, emittedEnd = lineNo, me
		// Context after: lines up to lineNo+ctxLines that do not match themselves (those
		// are found by the next round as matches).
		next := me + 1
		n := lineNo + 1
		for ; n <= lineNo+ctxLines && next < len(data); n++ {
			e := lineEnd(data, next)
			if p.lineMatches(data[next:e]) {
				break
			}
			out = append(out, Line{Number: n, Text: data[next:e]})
			emitted, emittedEnd = n, e
			next = e + 1
		}
		pos, lineNo = emittedEnd+1, emitted+1
	}
	return out
}

// candidates caches, per literal of the pattern's prefilter, the next offset where it
// occurs (-2: not searched yet, -1: nowhere after), so each is searched once per file.
type candidates struct {
	finds []*litFinder
	next  []int
	ctx   context.Context // checked now and then, so a huge file does not delay an abort
	steps int
}

func newCandidates(ctx context.Context, p *Pattern) *candidates {
	c := &candidates{finds: p.finds, next: make([]int, len(p.finds)), ctx: ctx}
	for i := range c.next {
		c.next[i] = -2
	}
	return c
}

// at returns the first offset at or after pos on whose line a match may start, or -1.
func (c *candidates) at(data []byte, pos int) int {
	best := -1
	for i, f := range c.finds {
		if c.next[i] != -1 && c.next[i] < pos {
			if j := f.index(data[pos:]); j >= 0 {
				c.next[i] = pos + j
			} else {
				c.next[i] = -1
			}
		}
		if n := c.next[i]; n >= 0 && (best < 0 || n < best) {
			best = n
		}
	}
	return best
}

// nextMatchLine returns the start of the first line at or after pos that matches.
func nextMatchLine(p *Pattern, c *candidates, data []byte, pos int) (int, bool) {
	for pos <= len(data) {
		if c.steps++; c.steps%4096 == 0 && c.ctx.Err() != nil {
			return 0, false
		}
		if pos == len(data) && (pos == 0 || data[pos-1] == '\n') {
			return 0, false // no line starts here: the file ended with its terminator
		}
		if len(c.finds) > 0 {
			i := c.at(data, pos)
			if i < 0 {
				return 0, false
			}
			s, e := lineStart(data, pos, i), lineEnd(data, i)
			if p.whole || ((p.after == nil && p.before == nil) || p.aroundOK(data[s:e])) && p.match(data[s:e]) {
				return s, true
			}
			pos = e + 1
			continue
		}
		// No literal to look for: match line by line, where Go's regexp can use its
		// backtracker (much faster than its NFA over a whole file), skipping lines
		// without a byte the pattern needs.
		i := pos
		if p.endClass != nil {
			// Every match ends the line: only a line ending in the class can match,
			// and lines are found with the vectorized IndexByte.
			e := lineEnd(data, pos)
			if p.endOK(data[pos:e]) && p.match(data[pos:e]) {
				return pos, true
			}
			pos = e + 1
			continue
		}
		if p.runSet != nil {
			if i = indexRun(data, pos, p.runSet, p.runLen); i < 0 {
				return 0, false
			}
		} else if p.bytes != nil {
			i = indexByteSet(data, pos, p.bytes)
			if i < 0 {
				return 0, false // every match needs one of these bytes
			}
		}
		s, e := lineStart(data, pos, i), lineEnd(data, i)
		if p.match(data[s:e]) {
			return s, true
		}
		pos = e + 1
	}
	return 0, false
}

// indexByteSet returns the first offset at or after from of a byte in set, or -1.
func indexByteSet(data []byte, from int, set *[256]bool) int {
	for i := from; i < len(data); i++ {
		if set[data[i]] {
			return i
		}
	}
	return -1
}

// lineMatches reports whether one line (without terminator) matches.
func (p *Pattern) lineMatches(line []byte) bool {
	if p.whole {
		return p.finds[0].index(line) >= 0
	}
	return p.match(line)
}

// lineStart returns the start of the line containing i, given that a line starts at
// pos <= i. It looks back a little first (lines are short), then forward from pos with
// the vectorized IndexByte, since bytes.LastIndexByte is a plain loop and a line can be
// gigabytes long.
func lineStart(data []byte, pos, i int) int {
	from := max(pos, i-4096)
	if j := bytes.LastIndexByte(data[from:i], '\n'); j >= 0 {
		return from + j + 1
	}
	s := pos
	for s < from {
		j := bytes.IndexByte(data[s:from], '\n')
		if j < 0 {
			break
		}
		s += j + 1
	}
	return s
}

// lineEnd returns the offset of the '\n' ending the line that contains i, or len(data).
func lineEnd(data []byte, i int) int {
	if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(data)
}
