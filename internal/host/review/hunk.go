package review

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/hostgit"
)

// Hunk is one hunk of a file's unified diff (git's, as review shows it), numbered from 1
// in the order of the diff.
type Hunk struct {
	N                  int
	OldStart, OldLines int // git's "-OldStart,OldLines": an empty range sits after line OldStart
	NewStart, NewLines int
	Header             string // the "@@ … @@" line as git wrote it
	Added, Removed     int
	Text               string // the header and the body, as in the diff
	oldSide, newSide   [][]byte
	mark               int // where the header's closing "@@" ends, in the patch
}

// maxHunkFile bounds the size of either side of a file landed by hunks: both are held in
// memory to be cut and joined.
const maxHunkFile = 64 << 20

// ErrHunksMoved is a land of hunks refused because the file's diff changed since its
// hunks were numbered (another land moved its base).
var ErrHunksMoved = errors.New("the file's diff changed since its hunks were numbered")

// NotHunkable says why f cannot be landed by hunks ("" when it can): only a regular text
// file modified in place, its mode kept, has hunks to pick from; any other change lands
// whole.
func NotHunkable(f File) string {
	switch {
	case f.Status == Added:
		return "a new file"
	case f.Status == Deleted:
		return "deleted in the sandbox"
	case f.Status == Renamed:
		return "renamed in the sandbox"
	case f.Status != Modified || !isRegular(f.OldMode) || !isRegular(f.NewMode):
		return "not a regular file on both sides"
	case f.Binary:
		return "a binary file"
	case f.OldMode != f.NewMode:
		return "changed with its executable bit"
	}
	return ""
}

func isRegular(mode string) bool { return mode == ModeFile || mode == ModeExec }

// ParseHunks reads the hunks of one file's unified diff (git's "diff --git" output for
// it). Each hunk's body is taken by its line counts, so a line of content that looks like
// a header is never one.
func ParseHunks(patch []byte) ([]Hunk, error) {
	var hunks []Hunk
	pos := 0
	line := func() (string, int, bool) { // the next line without its "\n", and its start
		if pos >= len(patch) {
			return "", pos, false
		}
		start := pos
		end := bytes.IndexByte(patch[pos:], '\n')
		if end < 0 {
			pos = len(patch)
			return string(patch[start:]), start, true
		}
		pos += end + 1
		return string(patch[start : start+end]), start, true
	}
	for {
		l, start, ok := line()
		if !ok {
			return hunks, nil
		}
		if !strings.HasPrefix(l, "@@ -") {
			if len(hunks) > 0 {
				return nil, fmt.Errorf("unexpected line %q after hunk %d", l, len(hunks))
			}
			continue // the file's headers
		}
		h, err := parseHeader(l)
		if err != nil {
			return nil, err
		}
		h.N, h.Header = len(hunks)+1, l
		h.mark = start + strings.Index(l[2:], "@@") + 4
		var last byte // the previous body line's prefix, for "\ No newline at end of file"
		for o, n := 0, 0; o < h.OldLines || n < h.NewLines || (pos < len(patch) && patch[pos] == '\\'); {
			b, _, ok := line()
			if !ok {
				return nil, fmt.Errorf("hunk %d ends early", h.N)
			}
			if b == "" {
				return nil, fmt.Errorf("hunk %d has an empty line", h.N)
			}
			text := []byte(b[1:] + "\n")
			switch b[0] {
			case ' ':
				h.oldSide, h.newSide = append(h.oldSide, text), append(h.newSide, text)
				o, n = o+1, n+1
			case '-':
				h.oldSide = append(h.oldSide, text)
				o++
				h.Removed++
			case '+':
				h.newSide = append(h.newSide, text)
				n++
				h.Added++
			case '\\': // the line before has no newline at the end of the file
				if last == ' ' || last == '-' {
					chop(h.oldSide)
				}
				if last == ' ' || last == '+' {
					chop(h.newSide)
				}
			default:
				return nil, fmt.Errorf("hunk %d: unexpected line %q", h.N, b)
			}
			last = b[0]
			if o > h.OldLines || n > h.NewLines {
				return nil, fmt.Errorf("hunk %d is longer than its header says", h.N)
			}
		}
		h.Text = string(patch[start:pos])
		hunks = append(hunks, h)
	}
}

// chop takes the "\n" off the last of lines.
func chop(lines [][]byte) {
	if n := len(lines); n > 0 {
		lines[n-1] = bytes.TrimSuffix(lines[n-1], []byte("\n"))
	}
}

// parseHeader reads "@@ -A[,B] +C[,D] @@…" (a missing count is 1).
func parseHeader(l string) (Hunk, error) {
	f := strings.Fields(l)
	if len(f) < 4 || f[3] != "@@" || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return Hunk{}, fmt.Errorf("unexpected hunk header %q", l)
	}
	var h Hunk
	var err error
	if h.OldStart, h.OldLines, err = parseRange(f[1][1:]); err == nil {
		h.NewStart, h.NewLines, err = parseRange(f[2][1:])
	}
	if err != nil {
		return Hunk{}, fmt.Errorf("hunk header %q: %w", l, err)
	}
	return h, nil
}

func parseRange(s string) (start, lines int, err error) {
	a, b, hasCount := strings.Cut(s, ",")
	lines = 1
	if start, err = strconv.Atoi(a); err == nil && hasCount {
		lines, err = strconv.Atoi(b)
	}
	if err == nil && (start < 0 || lines < 0) {
		err = fmt.Errorf("negative range %q", s)
	}
	return start, lines, err
}

// ApplyHunks returns old with the chosen hunks applied (each hunk's new side in place of
// its old one) and the others left as they were. A hunk whose old side is not what old
// has there is an error: the diff is not old's.
func ApplyHunks(old []byte, hunks []Hunk, chosen map[int]bool) ([]byte, error) {
	lines := splitLines(old)
	var out bytes.Buffer
	at := 0 // lines of old copied so far
	for _, h := range hunks {
		start := h.OldStart - 1
		if h.OldLines == 0 {
			start = h.OldStart // an empty range is after its line
		}
		if start < at || start+h.OldLines > len(lines) || len(h.oldSide) != h.OldLines {
			return nil, fmt.Errorf("hunk %d does not fit the file", h.N)
		}
		for i, l := range h.oldSide {
			if !bytes.Equal(lines[start+i], l) {
				return nil, fmt.Errorf("hunk %d does not match the file at line %d", h.N, start+i+1)
			}
		}
		for _, l := range lines[at:start] {
			out.Write(l)
		}
		side := h.oldSide
		if chosen[h.N] {
			side = h.newSide
		}
		for _, l := range side {
			out.Write(l)
		}
		at = start + h.OldLines
	}
	for _, l := range lines[at:] {
		out.Write(l)
	}
	return out.Bytes(), nil
}

// splitLines cuts b after each "\n"; the last line may have none.
func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}

// NumberHunks returns patch with each hunk's number after its header's closing "@@"
// ("@@ -3,7 +3,8 @@ [hunk 2] func main() {"), so that a reader can name it to land; a
// patch that does not parse is returned as it is.
func NumberHunks(patch []byte) []byte {
	hunks, err := ParseHunks(patch)
	if err != nil || len(hunks) == 0 {
		return patch
	}
	var out bytes.Buffer
	at := 0
	for _, h := range hunks {
		out.Write(patch[at:h.mark])
		fmt.Fprintf(&out, " [hunk %d]", h.N)
		at = h.mark
	}
	out.Write(patch[at:])
	return out.Bytes()
}

// Hunks returns the hunks of f's diff in c, numbered as review shows them; a file that
// cannot be landed by hunks is an error saying why.
func Hunks(ctx context.Context, g *hostgit.Git, c Changes, f File) ([]Hunk, error) {
	if why := NotHunkable(f); why != "" {
		return nil, fmt.Errorf("%s is %s: land it whole, without hunks", Quote(f.Path), why)
	}
	patch, err := Patch(ctx, g, c, f)
	if err != nil {
		return nil, err
	}
	hunks, err := ParseHunks(patch)
	if err != nil {
		return nil, fmt.Errorf("the diff of %s: %w", Quote(f.Path), err)
	}
	return hunks, nil
}

// ParseHunkList reads a list of hunk numbers as a user writes them: "2", "1,3", "2-4",
// "1,3-5" (spaces allowed after commas). Zero, a malformed part, a backwards range or a
// number given twice is an error naming it; the numbers come back sorted.
func ParseHunkList(s string) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		a, b, isRange := strings.Cut(part, "-")
		from, err1 := strconv.Atoi(a)
		to, err2 := from, error(nil)
		if isRange {
			to, err2 = strconv.Atoi(b)
		}
		if part == "" || err1 != nil || err2 != nil || strings.HasPrefix(a, "+") || strings.HasPrefix(b, "+") {
			return nil, fmt.Errorf("hunk list %q: %q is not a hunk number or a range N-M", s, part)
		}
		if from < 1 || to < 1 {
			return nil, fmt.Errorf("hunk list %q: hunks are numbered from 1", s)
		}
		if to < from {
			return nil, fmt.Errorf("hunk list %q: the range %s goes backwards", s, part)
		}
		for n := from; n <= to; n++ {
			if seen[n] {
				return nil, fmt.Errorf("hunk list %q: hunk %d is named twice", s, n)
			}
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out, nil
}

// landHunks turns the one file chosen for a land of sel.Hunks into the change to write:
// Base's content with only those hunks applied, stored as a blob, so that it is written
// and recorded as any change is (the record's base then holds the landed hunks, and the
// next review shows the others). It returns the file to land and how many of its hunks
// stay unlanded. Nothing is written to the host here.
func landHunks(ctx context.Context, g *hostgit.Git, c Changes, chosen []File, sel Selection) (File, int, error) {
	if sel.All || len(sel.Paths) != 1 {
		return File{}, 0, errors.New("hunks are of one file: name exactly that file, without --all")
	}
	p := path.Clean(sel.Paths[0])
	if len(chosen) != 1 || chosen[0].Path != p {
		return File{}, 0, fmt.Errorf("hunks are of one file: %s is not a changed file (name the file, not a directory)", Quote(p))
	}
	f := chosen[0]
	if sel.HunkBase != "" && sel.HunkBase != f.OldID {
		return File{}, 0, fmt.Errorf("%w (%s): review it again", ErrHunksMoved, Quote(f.Path))
	}
	hunks, err := Hunks(ctx, g, c, f)
	if err != nil {
		return File{}, 0, err
	}
	want := map[int]bool{}
	for _, n := range sel.Hunks {
		switch {
		case n < 1 || n > len(hunks):
			return File{}, 0, fmt.Errorf("%s has %d hunk(s): there is no hunk %d", Quote(f.Path), len(hunks), n)
		case want[n]:
			return File{}, 0, fmt.Errorf("hunk %d is named twice", n)
		}
		want[n] = true
	}
	if len(want) == len(hunks) {
		return f, 0, nil // every hunk: the whole change, as Head has it
	}
	old, err := blob(ctx, g, f.OldID, maxHunkFile)
	if err != nil {
		return File{}, 0, fmt.Errorf("reading %s as it was: %w", Quote(f.Path), err)
	}
	// The hunks must make Head's file when all are applied: else they are not this
	// file's diff, and a part of them is not what the review showed.
	all := map[int]bool{}
	for _, h := range hunks {
		all[h.N] = true
	}
	whole, err := ApplyHunks(old, hunks, all)
	if err == nil {
		var head []byte
		if head, err = blob(ctx, g, f.NewID, maxHunkFile); err == nil && !bytes.Equal(whole, head) {
			err = errors.New("its hunks do not make the sandbox's file")
		}
	}
	if err != nil {
		return File{}, 0, fmt.Errorf("cutting %s into hunks: %w", Quote(f.Path), err)
	}
	part, err := ApplyHunks(old, hunks, want)
	if err != nil {
		return File{}, 0, fmt.Errorf("cutting %s into hunks: %w", Quote(f.Path), err)
	}
	// --no-filters: the blob is these bytes, whatever attributes or autocrlf say.
	id, err := g.Run(ctx, bytes.NewReader(part), nil, "hash-object", "-w", "--no-filters", "--stdin")
	if err != nil {
		return File{}, 0, fmt.Errorf("storing the hunks of %s: %w", Quote(f.Path), err)
	}
	f.NewID = strings.TrimSpace(string(id))
	f.Added, f.Removed = 0, 0
	for _, h := range hunks {
		if want[h.N] {
			f.Added += h.Added
			f.Removed += h.Removed
		}
	}
	return f, len(hunks) - len(want), nil
}
