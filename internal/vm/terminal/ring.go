package terminal

// ring keeps the last max bytes of a stream and counts all of them, so that a byte's
// offset in the stream says whether it is still here.
type ring struct {
	buf   []byte // grows up to max, then is written around
	head  int    // index of the oldest byte once full
	max   int
	total int64 // bytes ever written
}

func (r *ring) write(p []byte) {
	r.total += int64(len(p))
	if len(p) >= r.max {
		if cap(r.buf) < r.max {
			r.buf = make([]byte, 0, r.max)
		}
		r.buf = append(r.buf[:0], p[len(p)-r.max:]...)
		r.head = 0
		return
	}
	if len(r.buf) < r.max {
		n := min(len(p), r.max-len(r.buf))
		if len(r.buf)+n > cap(r.buf) { // grow by doubling, never past max
			grown := make([]byte, len(r.buf), min(r.max, max(2*cap(r.buf), len(r.buf)+n, 4096)))
			copy(grown, r.buf)
			r.buf = grown
		}
		r.buf = append(r.buf, p[:n]...)
		p = p[n:]
	}
	for len(p) > 0 { // full: overwrite the oldest bytes
		n := copy(r.buf[r.head:], p)
		p = p[n:]
		r.head = (r.head + n) % len(r.buf)
	}
}

// start is the offset of the oldest byte still held.
func (r *ring) start() int64 { return r.total - int64(len(r.buf)) }

// since returns a copy of the bytes from offset from (or from the oldest held, if
// from is older) to the end, and the offset it starts at.
func (r *ring) since(from int64) ([]byte, int64) {
	from = max(from, r.start())
	if from >= r.total {
		return nil, r.total
	}
	n := int(r.total - from)
	out := make([]byte, 0, n)
	skip := len(r.buf) - n // bytes of the held ones before from
	i := (r.head + skip) % len(r.buf)
	if i+n <= len(r.buf) {
		return append(out, r.buf[i:i+n]...), from
	}
	out = append(out, r.buf[i:]...)
	return append(out, r.buf[:n-(len(r.buf)-i)]...), from
}
