package shell

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// reader reads a pipe on its own goroutine and hands chunks to the event loop, with a
// few buffers in flight so reading overlaps processing.
//
// Stopping never loses a byte that reached the pipe before the stop: the event loop may
// give up on a pipe that background processes hold open, but what the command wrote up
// to then is in the pipe's buffer or in the goroutine's hands, and drain returns both.
// (Under load the goroutine can run long after the shell exited; a stop that merely
// closed the pipe dropped that output and reported "(no output)".)
type reader struct {
	chunks chan []byte // closed at end of stream or read error
	free   chan []byte
	quit   chan struct{}
	done   chan struct{}
	f      *os.File
	held   []byte // a chunk read but not handed over when quit came; the loop's until done
	ended  bool   // the loop saw end of stream or a read error; the loop's until done
}

const readBuffers = 4

func startReader(f *os.File) *reader {
	r := &reader{
		chunks: make(chan []byte),
		free:   make(chan []byte, readBuffers),
		quit:   make(chan struct{}),
		done:   make(chan struct{}),
		f:      f,
	}
	for range readBuffers {
		r.free <- make([]byte, readChunk)
	}
	go r.loop()
	return r
}

func (r *reader) loop() {
	defer close(r.done)
	defer close(r.chunks)
	for {
		var buf []byte
		select {
		case buf = <-r.free:
		case <-r.quit:
			return
		}
		n, err := r.f.Read(buf[:cap(buf)])
		if n > 0 {
			select {
			case r.chunks <- buf[:n]:
			case <-r.quit:
				r.held = buf[:n]
				return
			}
		} else {
			r.free <- buf
		}
		if err != nil {
			// A deadline is how stop interrupts a blocked Read: the pipe itself may
			// still hold bytes, which drain reads.
			r.ended = !errors.Is(err, os.ErrDeadlineExceeded)
			return
		}
	}
}

// release gives a chunk's buffer back once its bytes have been used.
func (r *reader) release(b []byte) { r.free <- b[:cap(b)] }

// pending is how many bytes the pipe holds unread (0 if that cannot be known).
func (r *reader) pending() int { return unreadBytes(r.f) }

// unreadBytes is how many bytes a pipe or terminal holds unread (0 if that cannot be
// known).
func unreadBytes(f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	var n int
	_ = rc.Control(func(fd uintptr) {
		n, _ = unix.IoctlGetInt(int(fd), fionread)
	})
	return n
}

// drain stops reading, even with a background process still holding the pipe open, and
// returns, in order, every byte that had reached the pipe and not been handed over:
// the chunk the goroutine held and what the pipe buffered at that moment. What a
// background process writes after that is not waited for (pi stops reading then too).
// After drain the pipe is closed.
func (r *reader) drain() ([]byte, error) {
	defer r.f.Close()
	close(r.quit)
	_ = r.f.SetReadDeadline(time.Now()) // interrupt a blocked Read; an unpollable file only errs
	<-r.done
	out := r.held
	if r.ended {
		return out, nil
	}
	// Read what the pipe holds now, and no more: a writer that keeps filling it must
	// not keep us here.
	want := r.pending()
	if want == 0 {
		return out, nil
	}
	if err := r.f.SetReadDeadline(time.Time{}); err != nil {
		return out, fmt.Errorf("draining output pipe: %w", err)
	}
	rc, err := r.f.SyscallConn()
	if err != nil {
		return out, fmt.Errorf("draining output pipe: %w", err)
	}
	buf := make([]byte, want)
	got := 0
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		for got < want {
			n, err := unix.Read(int(fd), buf[got:])
			if n > 0 {
				got += n
				continue
			}
			if err != nil && err != unix.EAGAIN && err != unix.EINTR {
				rerr = err
			}
			if err != unix.EINTR {
				break
			}
		}
		return true // never wait: only what is there now
	})
	if err == nil {
		err = rerr
	}
	out = append(out, buf[:got]...)
	if err != nil {
		return out, fmt.Errorf("draining output pipe: %w", err)
	}
	return out, nil
}
