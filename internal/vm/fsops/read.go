package fsops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/fileio"
	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/image"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/js"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/truncate"
)

// ReadArgs are read's arguments.
type ReadArgs struct {
	Path   string   `json:"path"`
	Offset *float64 `json:"offset,omitempty"`
	Limit  *float64 `json:"limit,omitempty"`
}

// ReadDetails is read's details object: the truncation of a text file when one applied.
type ReadDetails struct {
	Truncation *truncate.Result `json:"truncation,omitempty"`
}

// Read is pi's read tool: an image as an attachment, or a text file's lines from offset,
// at most limit of them, cut at 2000 lines or 50KB with pi's notices. The file is streamed,
// so reading near the end of a huge file holds only what is shown.
func Read(ctx context.Context, cwd string, a ReadArgs) (result.Result, error) {
	if ctx.Err() != nil {
		return result.Result{}, fileio.ErrAborted
	}
	// pi opens the file twice, to sniff an image type and to read it; a regular file is
	// opened once here, its first bytes sniffed and then read on as text (each open,
	// read and close is a round trip over a shared workspace). Anything else (a FIFO,
	// a device) is opened twice as pi does, since a second open is what pi reads.
	f, abs, err := openToRead(a.Path, cwd)
	if err != nil {
		return result.Result{}, err
	}
	defer f.Close()
	if size, typ, err := fileio.StatFile(f); err == nil && typ.IsRegular() {
		// The first read takes what the line selector's first chunk would: a file under
		// 64 KB whole, in one round trip over a share.
		mime, head, err := image.DetectMimeType(f, chunkSize(size))
		if err != nil {
			return result.Result{}, err
		}
		if mime == "" {
			return readText(ctx, abs, a, &openedFile{f: f, head: head, size: size})
		}
	}
	f.Close()
	mime, err := image.DetectFileMimeType(abs)
	if err != nil {
		return result.Result{}, err
	}
	if mime != "" {
		data, err := fileio.ReadFile(abs)
		if err != nil {
			return result.Result{}, err
		}
		return image.Read(ctx, data, mime)
	}
	return readText(ctx, abs, a, nil)
}

// openToRead resolves p as pi does (a macOS spelling of a path that does not exist),
// checks it as pi does (access R_OK, then open) and opens it. A path that opens at once
// exists, so pi would resolve it to itself and access would grant it: the checks run
// only when that first open fails, which saves two path resolutions per read (over a
// share with its cache off, a lookup and a getattr per component each).
func openToRead(p, cwd string) (*os.File, string, error) {
	if abs, err := ResolveToCwd(p, cwd); err == nil && strings.IndexByte(abs, 0) < 0 {
		if f, err := fileio.OpenFresh(abs); err == nil { // the host's file now, not a share's cached copy
			return f, abs, nil
		}
	}
	abs, err := resolveReadPath(p, cwd)
	if err != nil {
		return nil, "", err
	}
	if err := pathNullBytes(abs); err != nil {
		return nil, "", err
	}
	if err := fileio.Access(abs, fileio.AccessRead); err != nil {
		return nil, "", fileio.NodeErr(err, "access", abs)
	}
	f, err := fileio.OpenFresh(abs)
	if err != nil {
		return nil, "", fileio.NodeErr(err, "open", abs)
	}
	return f, abs, nil
}

// headReader reads head, then r, filling each buffer as one read of the whole file
// would: the line selector's chunks (and so how it decodes them) stay what they were
// with one open.
type headReader struct {
	head []byte
	r    io.Reader
	eof  bool // r has ended (a read less saved: each is a round trip over a share)
}

func (h *headReader) Read(p []byte) (int, error) {
	if h.eof {
		return 0, io.EOF
	}
	if len(h.head) == 0 {
		return h.r.Read(p)
	}
	n := copy(p, h.head)
	h.head = h.head[n:]
	if len(h.head) > 0 || n == len(p) {
		return n, nil
	}
	m, err := io.ReadFull(h.r, p[n:])
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err, h.eof = nil, true // the next read reports the end
	}
	return n + m, err
}

// openedFile is a regular file Read has opened and read the first bytes of.
type openedFile struct {
	f    *os.File
	head []byte // read from offset 0; f is past them
	size int64
}

// readText selects and formats lines of a text file as pi's read does.
func readText(ctx context.Context, abs string, a ReadArgs, opened *openedFile) (result.Result, error) {
	// pi: startLine = offset ? Math.max(0, offset - 1) : 0 (offset 0 means line 1).
	startLine := 0.0
	if a.Offset != nil && *a.Offset != 0 {
		startLine = math.Max(0, *a.Offset-1)
	}
	startDisplay := startLine + 1

	sel, err := selectFileLines(ctx, abs, startLine, a, opened)
	if err != nil {
		return result.Result{}, err
	}
	total := float64(sel.totalFileLines)
	if startLine >= total {
		return result.Result{}, fmt.Errorf("Offset %s is beyond end of file (%d lines total)", js.String(derefOr(a.Offset, 0)), sel.totalFileLines)
	}
	tr := sel.trunc
	var text string
	var details any
	switch {
	case tr.FirstLineExceedsLimit:
		if startLine != math.Trunc(startLine) {
			// pi measures allLines[startLine], which is undefined for a fractional index.
			return result.Result{}, errors.New(`The "string" argument must be of type string or an instance of Buffer or ArrayBuffer. Received undefined`)
		}
		text = fmt.Sprintf("[Line %s is %s, exceeds %s limit. Use bash: sed -n '%sp' %s | head -c %d]",
			js.String(startDisplay), truncate.FormatSize(int(sel.firstLineBytes)), truncate.FormatSize(truncate.DefaultMaxBytes),
			js.String(startDisplay), a.Path, truncate.DefaultMaxBytes)
		details = ReadDetails{Truncation: &tr}
	case tr.Truncated:
		endDisplay := startDisplay + float64(tr.OutputLines) - 1
		limitNote := ""
		if tr.TruncatedBy == nil || *tr.TruncatedBy != "lines" {
			limitNote = fmt.Sprintf(" (%s limit)", truncate.FormatSize(truncate.DefaultMaxBytes))
		}
		text = fmt.Sprintf("%s\n\n[Showing lines %s-%s of %d%s. Use offset=%s to continue.]",
			tr.Content, js.String(startDisplay), js.String(endDisplay), sel.totalFileLines, limitNote, js.String(endDisplay+1))
		details = ReadDetails{Truncation: &tr}
	default:
		text = tr.Content
		if a.Limit != nil {
			userLimited := math.Min(startLine+*a.Limit, total) - startLine
			if startLine+userLimited < total {
				remaining := total - (startLine + userLimited)
				text = fmt.Sprintf("%s\n\n[%s more lines in file. Use offset=%s to continue.]",
					tr.Content, js.String(remaining), js.String(startLine+userLimited+1))
			}
		}
	}
	return result.Text(text, details), nil
}

// selectFileLines streams the file for pi's selection of lines. For integer offsets and
// non-negative integer limits that is pi's streaming path; other values follow pi's
// whole-file path (JavaScript slice rules), which needs the line count first, so the file
// is read twice instead of being held in memory.
// When opened is set the file is read from it, its head first, instead of opened again.
func selectFileLines(ctx context.Context, abs string, startLine float64, a ReadArgs, opened *openedFile) (lineSelection, error) {
	var f *os.File
	var size int64 // 0: unknown (not a regular file)
	var first io.Reader
	if opened != nil {
		f, size = opened.f, opened.size
		first = &headReader{head: opened.head, r: f}
	} else {
		var err error
		if f, err = fileio.OpenFresh(abs); err != nil { // the host's file now, not a share's cached copy
			return lineSelection{}, fileio.NodeErr(err, "open", abs)
		}
		defer f.Close()
		if sz, typ, err := fileio.StatFile(f); err == nil && typ.IsRegular() {
			size = sz
		}
		first = f
	}
	if streamable(a.Offset, a.Limit) {
		end := int64(math.MaxInt64)
		if a.Limit != nil {
			end = lineIndex(startLine + *a.Limit)
		}
		return selectLines(ctx, first, lineIndex(startLine), end, size)
	}
	// pi's whole-file path reads with fs.readFile, which refuses files over 2 GiB.
	if size > fileio.MaxReadFileSize {
		return lineSelection{}, fileio.FileTooLarge(size)
	}
	count, err := selectLines(ctx, first, math.MaxInt64, math.MaxInt64, size)
	if err != nil {
		return lineSelection{}, err
	}
	n := count.totalFileLines
	endF := float64(n)
	if a.Limit != nil {
		endF = math.Min(startLine+*a.Limit, float64(n))
	}
	start, end := sliceBounds(startLine, endF, n)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return lineSelection{}, fileio.NodeErr(err, "read", "")
	}
	sel, err := selectLines(ctx, f, start, end, size)
	if err != nil {
		return lineSelection{}, err
	}
	sel.totalFileLines = n
	return sel, nil
}

// streamable is pi's isStreamableRange.
func streamable(offset, limit *float64) bool {
	isInt := func(f float64) bool { return !math.IsInf(f, 0) && f == math.Trunc(f) }
	return (offset == nil || isInt(*offset)) && (limit == nil || (isInt(*limit) && *limit >= 0))
}

// lineIndex converts a non-negative whole line number to an index, saturating.
func lineIndex(f float64) int64 {
	if f >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(f)
}

func derefOr(p *float64, def float64) float64 {
	if p == nil {
		return def
	}
	return *p
}

var amPm = regexp.MustCompile(`(?i) (AM|PM)\.`)

// resolveReadPath is pi's resolveReadPathAsync: the resolved path, or when it does not
// exist the first existing macOS spelling of it (narrow no-break space before AM/PM in
// screenshot names, NFD, curly apostrophe, NFD with curly apostrophe).
func resolveReadPath(p, cwd string) (string, error) {
	resolved, err := ResolveToCwd(p, cwd)
	if err != nil || pathExists(resolved) {
		return resolved, err
	}
	nfd := norm.NFD.String(resolved)
	curly := func(s string) string { return strings.ReplaceAll(s, "'", "\u2019") }
	for _, v := range []string{
		amPm.ReplaceAllString(resolved, "\u202F$1."),
		nfd,
		curly(resolved),
		curly(nfd),
	} {
		if v != resolved && pathExists(v) {
			return v, nil
		}
	}
	return resolved, nil
}

func pathExists(p string) bool {
	return fileio.Access(p, fileio.AccessExists) == nil
}
