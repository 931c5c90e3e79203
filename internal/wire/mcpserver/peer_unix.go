//go:build unix

package mcpserver

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// readerGone returns a channel closed once f, the write end of a pipe or a socket, has
// no reader left (poll reports POLLERR or POLLHUP: the client closed its end or died),
// checked every peerPoll until stop is closed. Anything else is never "gone".
func readerGone(f *os.File, stop <-chan struct{}) <-chan struct{} {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	gone := make(chan struct{})
	go func() {
		t := time.NewTicker(peerPoll)
		defer t.Stop()
		for {
			hup := false
			_ = rc.Control(func(fd uintptr) {
				fds := []unix.PollFd{{Fd: int32(fd)}}
				if n, err := unix.Poll(fds, 0); err == nil && n > 0 {
					hup = fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
				}
			})
			if hup {
				close(gone)
				return
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return gone
}

// peerPoll is how often readerGone looks: the delay before a vanished client's calls
// are cancelled.
const peerPoll = 100 * time.Millisecond
