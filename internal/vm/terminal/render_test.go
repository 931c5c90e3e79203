package terminal

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRender(t *testing.T) {
	cases := []struct {
		name, raw, want string
	}{
		{"plain text is itself", "a\nb\tc\n", "a\nb\tc\n"},
		{"crlf from a pty", "one\r\ntwo\r\n", "one\ntwo\n"},
		{"carriage return overwrites", "10%\r20%\r100%\n", "100%\n"},
		{"a shorter redraw keeps the tail, as the screen does", "abcdef\rxy\n", "xycdef\n"},
		{"erase to end of line after a redraw", "downloading 10/100\r\x1b[Kdone\n", "done\n"},
		{"colours stripped", "\x1b[1;31mred\x1b[0m plain\n", "red plain\n"},
		{"backspace", "abc\b\bX\n", "aXc\n"},
		{"cursor up redraws the line above (multi-line progress)", "a: 1%\nb: 1%\n\x1b[2A\ra: 99%\n\x1b[Kb: 99%\n", "a: 99%\nb: 99%\n"},
		{"cursor forward pads", "a\x1b[3Cb", "a   b"},
		{"column absolute", "hello\x1b[1GJ", "Jello"},
		{"OSC title and hyperlink dropped, text kept", "\x1b]0;title\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n", "link\n"},
		{"private modes dropped", "\x1b[?25l\x1b[?2004hok\x1b[?25h", "ok"},
		{"bell and other controls dropped", "a\x07b\x0ec", "abc"},
		{"invalid utf-8 becomes U+FFFD", "a\xffb", "a\uFFFDb"},
		{"C1 control dropped", "a\u009bb", "ab"},
		{"erase whole line", "junk\x1b[2K\rok", "ok"},
		{"clear screen keeps what it wiped, above the new screen", "old\n\x1b[2J\x1b[Hnew", "old\nnew"},
		{"absolute moves count from the screen after a clear", "a\x1b[2J\x1b[2;3Hx\x1b[1;1Hy", "a\ny\n  x"},
		{"save and restore cursor", "ab\x1b7cd\x1b8X", "abXd"},
		{"a truncated escape at the end is dropped", "ok\x1b[", "ok"},
		{"huge cursor move is bounded", "\x1b[999999999Cx", strings.Repeat(" ", maxCols) + "x"},
		{"spinner", "| \r/ \r- \r\\ \rdone\n", "done\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, Render([]byte(c.raw), 24))
		})
	}
}

// TestRenderProgressBarFlood: a megabyte of a progress bar redrawing itself comes out as
// its last state.
func TestRenderProgressBarFlood(t *testing.T) {
	var b strings.Builder
	for i := 0; i <= 20000; i++ {
		b.WriteString("\r\x1b[36m[")
		b.WriteString(strings.Repeat("=", i*40/20000))
		b.WriteString(strings.Repeat(" ", 40-i*40/20000))
		b.WriteString("]\x1b[0m ")
		b.WriteString(strings.Repeat("9", 1))
	}
	b.WriteString("\n")
	assert.Greater(t, b.Len(), 1<<20)
	assert.Equal(t, "["+strings.Repeat("=", 40)+"] 9\n", Render([]byte(b.String()), 24))
}

func TestRing(t *testing.T) {
	r := ring{max: 8}
	r.write([]byte("abc"))
	got, start := r.since(0)
	assert.Equal(t, "abc", string(got))
	assert.Zero(t, start)
	r.write([]byte("defgh"))
	r.write([]byte("ij"))
	got, start = r.since(0)
	assert.Equal(t, "cdefghij", string(got), "the newest 8 bytes")
	assert.Equal(t, int64(2), start)
	got, start = r.since(5)
	assert.Equal(t, "fghij", string(got))
	assert.Equal(t, int64(5), start)
	got, _ = r.since(10)
	assert.Empty(t, got)
	r.write([]byte("0123456789"))
	got, start = r.since(0)
	assert.Equal(t, "23456789", string(got))
	assert.Equal(t, int64(12), start)
}

// TestRingNeverHoldsMoreThanMax: however the writes come, the buffer's capacity stays
// within max.
func TestRingNeverHoldsMoreThanMax(t *testing.T) {
	for _, size := range []int{1, 100, 4095, 5000, 70000} {
		r := ring{max: 256 << 10}
		chunk := []byte(strings.Repeat("x", size))
		for r.total < 1<<20 {
			r.write(chunk)
			assert.LessOrEqual(t, cap(r.buf), r.max, "writes of %d", size)
		}
		got, start := r.since(0)
		assert.Len(t, got, r.max)
		assert.Equal(t, r.total-int64(r.max), start)
	}
}
