package jsonwire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wantLines is what readLine must return for input: each newline-terminated piece, and
// the rest with the reader's error; a piece over max+1 bytes is tooLong.
type lineResult struct {
	line    string
	tooLong bool
}

func wantLines(input []byte, max int) []lineResult {
	var out []lineResult
	for len(input) > 0 {
		n := bytes.IndexByte(input, '\n') + 1
		if n == 0 {
			n = len(input)
		}
		if n > max+1 {
			out = append(out, lineResult{tooLong: true})
		} else {
			out = append(out, lineResult{line: string(input[:n])})
		}
		input = input[n:]
	}
	return out
}

// readAllLines reads lines until the reader's error and checks that no returned line
// shares memory with a later one (a line is its caller's to keep).
func readAllLines(t *testing.T, r *LineReader, max int) ([]lineResult, error) {
	var out []lineResult
	var kept [][]byte
	for {
		line, tooLong, err := r.ReadLine(max)
		if len(line) > 0 || tooLong {
			out = append(out, lineResult{line: string(line), tooLong: tooLong})
			kept = append(kept, line)
		}
		if err != nil {
			for i, k := range kept {
				require.Equal(t, out[i].line, string(k), "line %d was overwritten by a later read", i)
			}
			return out, err
		}
	}
}

// chunkReader returns its input in reads of random sizes.
type chunkReader struct {
	data []byte
	rnd  *rand.Rand
	max  int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.data), 1+c.rnd.Intn(c.max))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

func TestLineReader(t *testing.T) {
	line := func(n int, c byte) string { return string(bytes.Repeat([]byte{c}, n)) + "\n" }
	inputs := map[string]string{
		"empty":             "",
		"short lines":       "a\nbb\n\nccc\n",
		"no final newline":  "a\nrest",
		"buffer exactly":    line(lineBuffer-1, 'x') + "y\n",
		"one over buffer":   line(lineBuffer, 'x') + "y\n",
		"long then short":   line(3*lineBuffer+17, 'x') + "short\n" + line(5, 'z'),
		"several long":      line(longLineStart+1, 'a') + line(2*longLineStart+3, 'b') + line(lineBuffer+1, 'c'),
		"long unterminated": line(lineBuffer*2, 'a') + string(bytes.Repeat([]byte("b"), 3*lineBuffer)),
		"multi-MB":          line(5<<20, 'm') + "tail\n",
	}
	for name, in := range inputs {
		for _, max := range []int{10, lineBuffer, 3 * lineBuffer, 64 << 20} {
			want := wantLines([]byte(in), max)
			readers := map[string]io.Reader{
				"whole":    bytes.NewReader([]byte(in)),
				"one byte": iotest.OneByteReader(bytes.NewReader([]byte(in))),
				"half":     iotest.HalfReader(bytes.NewReader([]byte(in))),
				"random":   &chunkReader{data: []byte(in), rnd: rand.New(rand.NewSource(int64(max))), max: 3 * lineBuffer},
			}
			if len(in) > 1<<20 {
				delete(readers, "one byte") // a byte per call: slow, and nothing new
			}
			for rname, r := range readers {
				t.Run(fmt.Sprintf("%s/max=%d/%s", name, max, rname), func(t *testing.T) {
					got, err := readAllLines(t, NewLineReader(r), max)
					assert.ErrorIs(t, err, io.EOF)
					assert.Equal(t, len(want), len(got))
					for i := range min(len(want), len(got)) {
						assert.Equal(t, want[i].tooLong, got[i].tooLong, "line %d", i)
						assert.True(t, want[i].line == got[i].line, "line %d: %d bytes, want %d", i, len(got[i].line), len(want[i].line))
					}
				})
			}
		}
	}
}

// TestLineReaderPassesReadErrors: a read error other than EOF comes with the bytes read
// before it, and again on every later read (another goroutine may read on).
func TestLineReaderPassesReadErrors(t *testing.T) {
	boom := errors.New("boom")
	for _, prefix := range []string{"", "a\npartial", "a\n" + string(bytes.Repeat([]byte("x"), 2*lineBuffer))} {
		r := NewLineReader(io.MultiReader(bytes.NewReader([]byte(prefix)), iotest.ErrReader(boom)))
		var got []string
		var err error
		for err == nil {
			var line []byte
			line, _, err = r.ReadLine(64 << 20)
			if len(line) > 0 {
				got = append(got, string(line))
			}
		}
		assert.ErrorIs(t, err, boom)
		again, _, err2 := r.ReadLine(64 << 20)
		assert.Empty(t, again)
		assert.ErrorIs(t, err2, boom, "the error stays")
		assert.Equal(t, prefix, string(bytes.Join(func() [][]byte {
			var b [][]byte
			for _, g := range got {
				b = append(b, []byte(g))
			}
			return b
		}(), nil)))
	}
}

// TestLineReaderTakesAnnouncedLinesWhole: a long line announced with its size is read
// into memory of exactly that size, in one piece; a size that is wrong (short, long, or
// over the limit) still gives the line exactly.
func TestLineReaderTakesAnnouncedLinesWhole(t *testing.T) {
	line := string(bytes.Repeat([]byte("x"), 3*lineBuffer+5)) + "\n"
	input := line + "next\n"
	for _, tc := range []struct {
		name  string
		hint  int
		whole bool // the line is its announced memory, uncopied
	}{
		{"exact", len(line), true},
		{"short", len(line) - 100, false},
		{"long", len(line) + 4096, false},
		{"over the limit", 64<<20 + 2, false},
		{"none", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewLineReader(&chunkReader{data: []byte(input), rnd: rand.New(rand.NewSource(3)), max: 2 * lineBuffer})
			r.hint = tc.hint
			got, tooLong, err := r.ReadLine(64 << 20)
			require.NoError(t, err)
			require.False(t, tooLong)
			assert.True(t, string(got) == line, "the line, exactly")
			if tc.whole {
				assert.Equal(t, len(line), cap(got), "one allocation of the announced size")
			}
			next, _, _ := r.ReadLine(64 << 20)
			assert.Equal(t, "next\n", string(next))
			assert.Zero(t, r.hint, "a size announces one line only")
		})
	}
}

// TestLineReaderForgetsASizeForAShortLine: a size announced before a short line is not
// taken for a long line after it.
func TestLineReaderForgetsASizeForAShortLine(t *testing.T) {
	long := string(bytes.Repeat([]byte("y"), 2*lineBuffer)) + "\n"
	r := NewLineReader(bytes.NewReader([]byte("short\n" + long)))
	r.hint = 10 << 20
	short, _, err := r.ReadLine(64 << 20)
	require.NoError(t, err)
	assert.Equal(t, "short\n", string(short))
	got, _, err := r.ReadLine(64 << 20)
	require.NoError(t, err)
	assert.True(t, string(got) == long)
	assert.Less(t, cap(got), 1<<20, "the long line is not sized by the short one's announcement")
}
