package hostgit

import (
	"errors"
	"io"
)

// ErrOver is the error of a write past a CapWriter's budget: git's output, or (in keep)
// what a sandbox sends, may be the sandbox's, and a child that writes more than its
// budget fails instead of filling memory or disk.
var ErrOver = errors.New("output over its limit")

// CapWriter passes at most its budget of bytes on; the write that would pass the budget,
// and every one after it, fails with ErrOver and writes nothing.
type CapWriter struct {
	w    io.Writer
	left int64
	over bool
}

// NewCapWriter returns a CapWriter passing at most n bytes on to w.
func NewCapWriter(w io.Writer, n int64) *CapWriter { return &CapWriter{w: w, left: n} }

// Over reports whether a write was refused for passing the budget.
func (c *CapWriter) Over() bool { return c.over }

func (c *CapWriter) Write(p []byte) (int, error) {
	if c.over || int64(len(p)) > c.left {
		c.over = true
		return 0, ErrOver
	}
	c.left -= int64(len(p))
	return c.w.Write(p)
}
