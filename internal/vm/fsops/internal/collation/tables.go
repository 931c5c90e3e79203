package collation

import (
	"bytes"
	"compress/flate"
	_ "embed"
	"encoding/binary"
	"fmt"
	"io"
	"sort"
	"sync"
	"unicode/utf8"
)

// ces.bin, deflated, is a sequence of uvarints: the number of runs, then per run the gap
// from the end of the previous one, its length, whether it is linear, and CEs (a count,
// then primary, secondary, tertiary of each); then the number of contractions, and per
// contraction its length in bytes, its bytes and its CEs. A linear run's code points have
// one CE each, the first one's, with the primary one higher per code point; any other run
// gives its CEs to its first code point (the rest are never looked up: Go's NFD
// decomposes them). Then the number of marks whose combining class Go's tables lack, and
// per mark its code point and class.
//
//go:embed ces.bin
var cesBin []byte

// ce is one collation element: primary<<32 | secondary<<16 | tertiary.
type ce uint64

func (c ce) primary() uint32   { return uint32(c >> 32) }
func (c ce) secondary() uint16 { return uint16(c >> 16) }
func (c ce) tertiary() uint16  { return uint16(c) }

type run struct {
	lo     rune
	n      int32
	linear bool
	off    uint32 // ces[off:off+cnt]
	cnt    uint32
}

// tables is ces.bin unpacked.
type tables struct {
	runs         []run
	bmp          []int32 // run index of each code point below 0x10000
	ces          []ce
	ascii        [128]ce // 0: completely ignorable
	contractions map[string][]ce
	prefixes     map[string]bool // proper prefixes, two code points or more, of contractions
	starts       map[rune]bool   // first code points of contractions
	ccc          map[rune]uint8  // combining classes Go's tables do not know (Unicode 16, 17)
	minCCC       rune            // the least code point in ccc
}

// loaded is the tables, unpacked once.
var loaded = sync.OnceValue(func() *tables {
	t, err := unpack(cesBin)
	if err != nil {
		panic(fmt.Sprintf("collation: ces.bin: %v", err)) // generated data: a broken build
	}
	return t
})

func unpack(z []byte) (*tables, error) {
	raw, err := io.ReadAll(flate.NewReader(bytes.NewReader(z)))
	if err != nil {
		return nil, fmt.Errorf("inflating: %w", err)
	}
	r := bytes.NewReader(raw)
	var bad error
	get := func() uint32 {
		v, err := binary.ReadUvarint(r)
		if err != nil && bad == nil {
			bad = fmt.Errorf("reading at byte %d: %w", len(raw)-r.Len(), err)
		}
		return uint32(v)
	}
	t := &tables{contractions: map[string][]ce{}, prefixes: map[string]bool{}, starts: map[rune]bool{}}
	getCEs := func() (uint32, uint32) {
		off, n := uint32(len(t.ces)), get()
		for i := uint32(0); i < n && bad == nil; i++ {
			t.ces = append(t.ces, ce(get())<<32|ce(get())<<16|ce(get()))
		}
		return off, n
	}
	nruns := get()
	t.runs = make([]run, 0, nruns)
	next := rune(0)
	for i := uint32(0); i < nruns && bad == nil; i++ {
		lo := next + rune(get())
		n := int32(get())
		rn := run{lo: lo, n: n, linear: get() == 1}
		rn.off, rn.cnt = getCEs()
		t.runs = append(t.runs, rn)
		next = lo + n
	}
	nc := get()
	for i := uint32(0); i < nc && bad == nil; i++ {
		b := make([]byte, get())
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, fmt.Errorf("reading contraction %d: %w", i, err)
		}
		off, n := getCEs()
		s := string(b)
		t.contractions[s] = t.ces[off : off+n : off+n]
		first, size := utf8.DecodeRuneInString(s)
		t.starts[first] = true
		for j := size; j < len(s); {
			_, n := utf8.DecodeRuneInString(s[j:])
			t.prefixes[s[:j]] = true
			j += n
		}
	}
	ncc := get()
	t.ccc = make(map[rune]uint8, ncc)
	t.minCCC = utf8.MaxRune
	for i := uint32(0); i < ncc && bad == nil; i++ {
		c := rune(get())
		t.ccc[c] = uint8(get())
		t.minCCC = min(t.minCCC, c)
	}
	if bad != nil {
		return nil, bad
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("%d bytes left over", r.Len())
	}
	t.bmp = make([]int32, 0x10000)
	for i, rn := range t.runs {
		for c := rn.lo; c < rn.lo+rune(rn.n) && c < 0x10000; c++ {
			t.bmp[c] = int32(i)
		}
	}
	for c := rune(0); c < 128; c++ {
		ces := t.lookup(c, nil)
		switch {
		case len(ces) > 1:
			return nil, fmt.Errorf("U+%04X has %d CEs, the ASCII table holds one", c, len(ces))
		case len(ces) == 1:
			t.ascii[c] = ces[0]
		}
	}
	return t, nil
}

// lookup appends c's CEs to dst.
func (t *tables) lookup(c rune, dst []ce) []ce {
	var i int
	if c < 0x10000 {
		i = int(t.bmp[c])
	} else {
		i = sort.Search(len(t.runs), func(i int) bool { return t.runs[i].lo > c }) - 1
	}
	rn := &t.runs[i]
	if rn.linear {
		return append(dst, t.ces[rn.off]+ce(c-rn.lo)<<32)
	}
	if c != rn.lo {
		return dst // decomposed before lookup, never asked (ces.bin's format)
	}
	return append(dst, t.ces[rn.off:rn.off+rn.cnt]...)
}
