// Package truncate reproduces pi's output truncation (pi 1.6.0 truncate.ts): the
// 2000-line / 50KB limits, head and tail truncation by whole lines, the 500-character
// grep line cut, and formatSize as it appears in every notice.
package truncate

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// pi's limits.
const (
	DefaultMaxLines   = 2000
	DefaultMaxBytes   = 50 * 1024
	GrepMaxLineLength = 500
)

// FormatSize renders a byte count as pi does: 512B, 1.5KB, 2.0MB.
func FormatSize(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%dB", n)
	case n < 1024*1024:
		return toFixed1(n, 1024) + "KB"
	default:
		return toFixed1(n, 1024*1024) + "MB"
	}
}

// toFixed1 is JavaScript's (n/unit).toFixed(1) for a power-of-two unit: n/unit is exact
// in binary, so an exact tie such as 1.25 rounds up as JavaScript does ("1.3"), where Go's
// %.1f would round it to even ("1.2").
func toFixed1(n, unit int) string {
	tenths := (n*10 + unit/2) / unit // round half up
	return fmt.Sprintf("%d.%d", tenths/10, tenths%10)
}

// Result mirrors pi's TruncationResult; it is returned to the model in details.truncation.
type Result struct {
	Content               string  `json:"content"`
	Truncated             bool    `json:"truncated"`
	TruncatedBy           *string `json:"truncatedBy"`
	TotalLines            int     `json:"totalLines"`
	TotalBytes            int     `json:"totalBytes"`
	OutputLines           int     `json:"outputLines"`
	OutputBytes           int     `json:"outputBytes"`
	LastLinePartial       bool    `json:"lastLinePartial"`
	FirstLineExceedsLimit bool    `json:"firstLineExceedsLimit"`
	MaxLines              int     `json:"maxLines"`
	MaxBytes              int     `json:"maxBytes"`
}

// Options are the limits; zero values mean pi's defaults. Use NoLineLimit for "Infinity".
type Options struct {
	MaxLines int
	MaxBytes int
}

// NoLineLimit stands for pi's maxLines: Number.POSITIVE_INFINITY.
const NoLineLimit = int(^uint(0) >> 1)

func (o Options) norm() Options {
	if o.MaxLines == 0 {
		o.MaxLines = DefaultMaxLines
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	return o
}

// Reasons for TruncatedBy.
const (
	byLines = "lines"
	byBytes = "bytes"
)

// reason returns a fresh *string for TruncatedBy, so that no two results share one.
func reason(by string) *string { return &by }

// SplitLines splits content for counting as pi 1.6.0 does: "" has no lines and a
// trailing "\n" does not start another line.
func SplitLines(content string) []string {
	if content == "" {
		return nil
	}
	lines := strings.Split(content, "\n")
	if strings.HasSuffix(content, "\n") {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// Head keeps whole lines from the top until either limit is reached.
func Head(content string, o Options) Result {
	o = o.norm()
	lines := SplitLines(content)
	r := Result{TotalLines: len(lines), TotalBytes: len(content), MaxLines: o.MaxLines, MaxBytes: o.MaxBytes}
	if len(lines) <= o.MaxLines && len(content) <= o.MaxBytes {
		r.Content, r.OutputLines, r.OutputBytes = content, len(lines), len(content)
		return r
	}
	r.Truncated = true
	if len(lines) > 0 && len(lines[0]) > o.MaxBytes {
		r.TruncatedBy = reason(byBytes)
		r.FirstLineExceedsLimit = true
		return r
	}
	var b strings.Builder
	n, size := 0, 0
	by := byLines
	for i, line := range lines {
		if i >= o.MaxLines {
			break
		}
		add := len(line)
		if i > 0 {
			add++
		}
		if size+add > o.MaxBytes {
			by = byBytes
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(line)
		size += add
		n++
	}
	if n >= o.MaxLines && size <= o.MaxBytes {
		by = byLines // pi reports "lines" whenever the line limit was reached
	}
	r.TruncatedBy = reason(by)
	r.Content, r.OutputLines, r.OutputBytes = b.String(), n, size
	return r
}

// Tail keeps whole lines from the bottom until either limit is reached; a last line that
// alone exceeds the byte limit is cut to its final bytes (LastLinePartial).
func Tail(content string, o Options) Result {
	o = o.norm()
	lines := SplitLines(content)
	r := Result{TotalLines: len(lines), TotalBytes: len(content), MaxLines: o.MaxLines, MaxBytes: o.MaxBytes}
	if len(lines) <= o.MaxLines && len(content) <= o.MaxBytes {
		r.Content, r.OutputLines, r.OutputBytes = content, len(lines), len(content)
		return r
	}
	r.Truncated = true
	kept, size := 0, 0
	by := byLines
	var partial string
	for i := len(lines) - 1; i >= 0 && kept < o.MaxLines; i-- {
		add := len(lines[i])
		if kept > 0 {
			add++
		}
		if size+add > o.MaxBytes {
			by = byBytes
			if kept == 0 {
				// The last line alone is too long: keep its end.
				partial = lastBytes(lines[i], o.MaxBytes)
				r.LastLinePartial = true
				kept, size = 1, len(partial)
			}
			break
		}
		size += add
		kept++
	}
	if kept >= o.MaxLines && size <= o.MaxBytes {
		by = byLines // pi reports "lines" whenever the line limit was reached
	}
	r.TruncatedBy = reason(by)
	if r.LastLinePartial {
		r.Content = partial
	} else {
		r.Content = strings.Join(lines[len(lines)-kept:], "\n")
	}
	r.OutputLines, r.OutputBytes = kept, len(r.Content)
	return r
}

// lastBytes returns at most max trailing bytes of s, starting on a UTF-8 boundary.
func lastBytes(s string, max int) string {
	start := len(s) - max
	if start <= 0 {
		return s
	}
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return s[start:]
}

// Line cuts a line longer than max UTF-16 code units (JavaScript .length) and marks it,
// never splitting a surrogate pair. It reports whether it cut.
func Line(line string, max int) (string, bool) {
	units := 0
	for i, r := range line {
		w := utf16.RuneLen(r)
		if w < 0 {
			w = 1
		}
		if units+w > max {
			return line[:i] + "... [truncated]", true
		}
		units += w
	}
	return line, false
}
