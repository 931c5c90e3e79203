package shell

import "os"

// reader reads a pipe on its own goroutine and hands chunks to the event loop, with a
// few buffers in flight so reading overlaps processing.
type reader struct {
	chunks chan []byte // closed at end of stream or read error
	free   chan []byte
	quit   chan struct{}
	done   chan struct{}
	f      *os.File
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
				return
			}
		} else {
			r.free <- buf
		}
		if err != nil {
			return
		}
	}
}

// release gives a chunk's buffer back once its bytes have been used.
func (r *reader) release(b []byte) { r.free <- b[:cap(b)] }

// stop ends reading, even with a background process still holding the pipe open, and
// waits for the goroutine. Closing the file unblocks a pending Read (pipes are pollable).
func (r *reader) stop() {
	close(r.quit)
	r.f.Close()
	<-r.done
}
