package fileio

import (
	"errors"
	"fmt"
)

// StreamCap is how much of a file that is not a regular file (a character device such
// as /dev/zero, a FIFO, a socket) a tool loads before giving up on it. Such a file has
// no size to plan by and may never end; pi's tools read it until it does (rg hangs with
// flat memory, Node's readFile grows until the process runs out of memory), so no answer
// of pi's is lost by stopping, and this is the most any call holds of one.
const StreamCap = 32 << 20

// ErrStreamTooLong is what a load of a non-regular file that does not end within
// StreamCap fails with (wrapped in a *StreamTooLongError naming the file).
var ErrStreamTooLong = errors.New("not a regular file, and longer than the tools load")

// StreamTooLongError names the non-regular file that did not end within StreamCap.
type StreamTooLongError struct {
	Path string // as the caller gave it
}

func (e *StreamTooLongError) Error() string {
	return fmt.Sprintf("%s is not a regular file and did not end within its first %d MB: a device, FIFO or socket is read at most that far", e.Path, StreamCap>>20)
}

// Unwrap makes errors.Is(err, ErrStreamTooLong) hold.
func (e *StreamTooLongError) Unwrap() error { return ErrStreamTooLong }
