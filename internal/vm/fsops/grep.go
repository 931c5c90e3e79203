package fsops

import (
	"context"
	"errors"
	"math"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/fileio"
	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/grepmatch"
	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/walk"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/truncate"
)

// GrepArgs are grep's arguments.
type GrepArgs struct {
	Pattern    string   `json:"pattern"`
	Path       string   `json:"path,omitempty"`
	Glob       string   `json:"glob,omitempty"`
	IgnoreCase bool     `json:"ignoreCase,omitempty"`
	Literal    bool     `json:"literal,omitempty"`
	Context    *float64 `json:"context,omitempty"`
	Limit      *float64 `json:"limit,omitempty"`
}

// GrepDetails is grep's details object; nil when there is nothing to report.
type GrepDetails struct {
	MatchLimitReached int              `json:"matchLimitReached,omitempty"`
	Truncation        *truncate.Result `json:"truncation,omitempty"`
	LinesTruncated    bool             `json:"linesTruncated,omitempty"`
}

const grepDefaultLimit = 100

// Grep is pi's grep tool, which runs ripgrep: the lines of files below path (or of the
// file path) matching pattern, with context lines, in ripgrep's JSON-event order as pi
// formats it. Like `rg --hidden` it searches dotfiles, skips binary files (a NUL byte)
// and symbolic links, and honours .gitignore (inside a git repository), .ignore,
// .rgignore, .git/info/exclude and the user's global gitignore; glob is ripgrep's
// --glob. Files come in sorted path order, where ripgrep's order varies from run to run.
// Unlike ripgrep under pi, an unreadable file or directory met while walking is skipped
// instead of failing the whole call.
func Grep(ctx context.Context, cwd string, a GrepArgs) (result.Result, error) {
	if ctx.Err() != nil {
		return result.Result{}, fileio.ErrAborted
	}
	p := a.Path
	if p == "" {
		p = "."
	}
	root, err := ResolveToCwd(p, cwd)
	if err != nil {
		return result.Result{}, err
	}
	st, err := os.Stat(root)
	if err != nil {
		return result.Result{}, newError("Path not found: " + root)
	}
	ctxLines := 0
	if a.Context != nil && *a.Context > 0 {
		ctxLines = int(math.Min(math.Floor(*a.Context), math.MaxInt32))
	}
	limit := effectiveLimit(a.Limit, grepDefaultLimit)
	if err := spawnNullBytes(rgArgs(a, ctxLines, st.IsDir(), root)); err != nil {
		return result.Result{}, err
	}
	pat, err := grepmatch.Compile(a.Pattern, a.Literal, a.IgnoreCase)
	if err != nil {
		return result.Result{}, err
	}
	c := &grepCollector{limit: limit, ctxLines: ctxLines}
	// Per file, enough lines for pi's limit logic: the limit-th match, the matches inside
	// its trailing context, and one more as proof.
	perFile := limit + 1 + min(ctxLines, math.MaxInt32-limit-1)
	if !st.IsDir() {
		lines, _, err := grepmatch.SearchFile(ctx, nil, "", root, false, pat, ctxLines, perFile, nil)
		if ctx.Err() != nil {
			return result.Result{}, fileio.ErrAborted
		}
		if errors.Is(err, fileio.ErrStreamTooLong) {
			return result.Result{}, err
		}
		if err != nil {
			return result.Result{}, newError(rgIOErrorText(root, err))
		}
		c.add(root, filepath.Base(root), lines)
		return c.result(), nil
	}
	opt := walk.Options{Names: walk.IgnoreFileNames{Custom: ".rgignore"}, RequireGit: true, Global: walk.LoadGlobalGitignore()}
	if a.Glob != "" {
		if opt.Override, err = walk.Override(a.Glob); err != nil {
			return result.Result{}, err
		}
	}
	if err := searchTree(ctx, root, opt, pat, ctxLines, perFile, c); err != nil {
		return result.Result{}, err
	}
	return c.result(), nil
}

// grepBatch is a run of consecutive files searched by one worker; done closes when
// every lines slice is set. Batching keeps goroutine hand-offs (and the scheduler's
// spinning that comes with them) to one per batch instead of one per file.
type grepBatch struct {
	files []walk.Entry
	lines [][]grepmatch.Line
	done  chan struct{}
}

// shareGrepWorkers is how many files grep searches at once over a workspace share
// (fileio.OnShare). The walk keeps its default: more walkers read directories no faster
// over sbxsim's share (each listed entry is an inode the server's tree must lock).
const shareGrepWorkers = 16

// grepBatchSize is the batch size once the search is under way; the first batches
// are smaller (1, 2, 4, …), so that a limit met in the first files is seen before the
// workers have searched far ahead.
const grepBatchSize = 16

// grepMaxAhead is, per worker, how many batches may be searched ahead of the
// collector once the search is under way.
const grepMaxAhead = 16

// searchTree walks root and searches its files in parallel, feeding the collector in
// walk order until it has what pi would show.
func searchTree(parent context.Context, root string, opt walk.Options, pat *grepmatch.Pattern, ctxLines, perFile int, c *grepCollector) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	workers := 2 * runtime.GOMAXPROCS(0)
	// The first credits, and the batches taken before more are given, stay what they
	// are without a share's extra workers: a limit met in the first files is as little
	// searched beyond.
	granted, growAfter := 2*workers, grepMaxAhead*workers
	if fileio.OnShare(root) {
		// Over a share a file costs three round trips (open, read, flush) that wait on
		// the host, not on a CPU: more files in flight.
		workers = max(workers, shareGrepWorkers)
	}
	// Batches searched ahead of the collector: few at first, so that a result decided
	// in the first files (a match limit) had little searched beyond it; then up to
	// maxAhead, so that a worker held up on one batch (a big file, or a thread the OS
	// has descheduled on a loaded machine) does not stall the others, which would
	// otherwise soon have nothing to search but batches the collector cannot take yet.
	// The walker takes a credit for each batch it sends; the collector gives one back
	// for each batch it takes, and past its first growAfter batches (where most limits
	// are met) one more while the lookahead is still growing.
	maxAhead := grepMaxAhead * workers
	credit := make(chan struct{}, maxAhead)
	taken := 0
	for i := 0; i < granted; i++ {
		credit <- struct{}{}
	}
	work := make(chan *grepBatch, workers)
	ordered := make(chan *grepBatch, maxAhead)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for b := range work {
				b.lines = make([][]grepmatch.Line, len(b.files))
				for k, e := range b.files {
					if ctx.Err() == nil {
						// A file that cannot be read is skipped (ripgrep reports it
						// on stderr and carries on).
						b.lines[k], buf, _ = grepmatch.SearchFile(ctx, e.Dir, e.Name, e.Abs, true, pat, ctxLines, perFile, buf)
					}
					if e.Dir != nil {
						e.Dir.Release()
					}
				}
				close(b.done)
			}
		}()
	}
	walkErr := make(chan error, 1)
	go func() {
		defer close(ordered)
		defer close(work)
		batch := &grepBatch{done: make(chan struct{})}
		size := 1
		// A batch's files hold their directories (acquired when batched): a worker
		// releases them, or the walker if the batch never reaches one.
		drop := func() {
			for _, e := range batch.files {
				if e.Dir != nil {
					e.Dir.Release()
				}
			}
			batch.files = nil
		}
		send := func() bool {
			select {
			case <-credit:
			case <-ctx.Done():
				drop()
				return false
			}
			ordered <- batch // never blocks: a credit is a free slot
			select {
			case work <- batch:
			case <-ctx.Done():
				drop()
				return false
			}
			batch = &grepBatch{done: make(chan struct{})}
			return true
		}
		err := walk.Tree(ctx, root, opt, func(e walk.Entry) bool {
			if !e.Type.IsRegular() {
				return true // directories are walked, links and devices are not searched
			}
			if e.Dir != nil {
				e.Dir.Acquire()
			}
			batch.files = append(batch.files, e)
			if len(batch.files) < size {
				return true
			}
			size = min(2*size, grepBatchSize)
			return send()
		})
		if err == nil && len(batch.files) > 0 {
			send()
		} else {
			drop()
		}
		walkErr <- err
	}()
collect:
	for b := range ordered {
		select {
		case <-b.done:
		case <-ctx.Done(): // b may never reach a worker once the walk is cancelled
		}
		if ctx.Err() != nil {
			break
		}
		credit <- struct{}{}
		if taken++; taken > growAfter && granted < maxAhead {
			credit <- struct{}{}
			granted++
		}
		for k, e := range b.files {
			if !c.add(e.Rel, grepDisplayPath(e.Rel), b.lines[k]) {
				cancel()
				break collect
			}
		}
	}
	cancel()
	for range ordered { // let the walker finish sending
	}
	wg.Wait()
	<-walkErr
	if parent.Err() != nil {
		return fileio.ErrAborted
	}
	return nil
}

// rgIOErrorText is ripgrep's message for a file it was given but cannot read, which pi
// shows as the error: the path and Rust's wording of the OS error ("Permission denied
// (os error 13)", the C library's text with the errno).
func rgIOErrorText(path string, err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return path + ": " + err.Error()
	}
	text := errno.Error()
	if text != "" {
		text = strings.ToUpper(text[:1]) + text[1:]
	}
	return path + ": " + text + " (os error " + strconv.Itoa(int(errno)) + ")"
}

// grepDisplayPath is how pi shows a file found below the search directory: the
// relative path with any backslash turned into a slash (pi's formatPath, written for
// Windows separators), except that pi takes a relative path starting with ".." for one
// outside the directory and shows only its base name ("..x/a.txt" becomes "a.txt").
func grepDisplayPath(rel string) string {
	if strings.HasPrefix(rel, "..") {
		return path.Base(rel)
	}
	return strings.ReplaceAll(rel, `\`, "/")
}

// grepCollector applies pi's handling of ripgrep's events to files in order: the match
// limit (the limit-th match's trailing context still shown, the notice only once
// another match proves more exist), line cutting and the 50KB cap.
type grepCollector struct {
	limit, ctxLines int

	out                []string
	outBytes, outCount int
	matchCount         int
	limitHit           bool
	trailingEnd        int
	lastFile           string
	matchLimitReached  bool
	linesTruncated     bool
	stopped            bool
}

// add feeds the lines of file (shown as display); it returns false once pi would stop
// reading.
func (c *grepCollector) add(file, display string, lines []grepmatch.Line) bool {
	for _, l := range lines {
		if !c.limitHit {
			c.push(file, display, l, l.Match)
			if !l.Match {
				continue
			}
			c.matchCount++
			if c.matchCount >= c.limit {
				c.limitHit = true
				c.trailingEnd = l.Number + c.ctxLines
			}
			continue
		}
		inWindow := file == c.lastFile && l.Number <= c.trailingEnd
		if inWindow {
			c.push(file, display, l, false)
		}
		if l.Match {
			c.matchLimitReached = true
		}
		if c.matchLimitReached && !(inWindow && l.Number < c.trailingEnd) {
			c.stopped = true
			return false
		}
	}
	return true
}

func (c *grepCollector) push(file, display string, l grepmatch.Line, match bool) {
	c.lastFile = file
	if !utf8.ValidString(display) {
		display = decodeLossy([]byte(display)) // ripgrep sends such paths as bytes; pi decodes them
	}
	text := decodeLossy(l.Text)
	if !l.Cut {
		text = strings.TrimSuffix(text, "\r")
	}
	text, cut := truncate.Line(text, truncate.GrepMaxLineLength)
	if cut {
		c.linesTruncated = true
	}
	sep := "-"
	if match {
		sep = ":"
	}
	line := display + sep + strconv.Itoa(l.Number) + sep + " " + text
	if c.outBytes-1 <= truncate.DefaultMaxBytes {
		c.out = append(c.out, line)
	}
	c.outBytes += len(line) + 1
	c.outCount++
}

func (c *grepCollector) result() result.Result {
	if c.matchCount == 0 {
		return result.Text("No matches found", nil)
	}
	tr := truncate.Head(strings.Join(c.out, "\n"), truncate.Options{MaxLines: jsMaxSafeInteger})
	tr.TotalLines = c.outCount
	tr.TotalBytes = c.outBytes - 1
	text := tr.Content
	var d GrepDetails
	var notices []string
	if c.matchLimitReached {
		notices = append(notices, strconv.Itoa(c.limit)+" matches limit reached. Use limit="+strconv.Itoa(2*c.limit)+" for more, or refine pattern")
		d.MatchLimitReached = c.limit
	}
	if tr.Truncated {
		notices = append(notices, byteLimitNotice())
		d.Truncation = &tr
	}
	if c.linesTruncated {
		notices = append(notices, "Some lines truncated to "+strconv.Itoa(truncate.GrepMaxLineLength)+" chars. Use read tool to see full lines")
		d.LinesTruncated = true
	}
	return withNotices(text, notices, d)
}
