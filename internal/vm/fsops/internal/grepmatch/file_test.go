package grepmatch

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSearchableEnd(t *testing.T) {
	line := "xxxxxxx\n" // 8 bytes
	cases := []struct {
		name string
		data string
		want int
	}{
		{"no NUL", line + line, 16},
		{"NUL in first fill", line + "\x00" + line, 0},
		// The first fill is 64KB; a NUL in the second one keeps the first fill's lines.
		{"NUL in second fill", strings.Repeat(line, 8192) + "\x00", 65536},
		{"NUL past a partial line", strings.Repeat(line, 8191) + "abc" + strings.Repeat(line, 10) + "\x00", 65528},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, searchableEnd([]byte(c.data)), c.name)
	}
}

func TestDecodeBOM(t *testing.T) {
	assert.Equal(t, "hi", string(decodeBOM([]byte("\xef\xbb\xbfhi"))))
	assert.Equal(t, "hé", string(decodeBOM([]byte("\xff\xfeh\x00\xe9\x00"))))
	assert.Equal(t, "hé", string(decodeBOM([]byte("\xfe\xff\x00h\x00\xe9"))))
	assert.Equal(t, "\xffplain", string(decodeBOM([]byte("\xffplain"))))
}

func TestFileSearchContext(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 12; i++ {
		if i == 3 || i == 5 || i == 11 {
			fmt.Fprintf(&b, "hit %d\n", i)
		} else {
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	p, err := Compile("hit", false, false)
	require.NoError(t, err)
	render := func(lines []Line) string {
		var out []string
		for _, l := range lines {
			sep := "-"
			if l.Match {
				sep = ":"
			}
			out = append(out, fmt.Sprintf("%d%s%s", l.Number, sep, l.Text))
		}
		return strings.Join(out, "|")
	}
	data := []byte(b.String())
	assert.Equal(t, "3:hit 3|5:hit 5|11:hit 11", render(fileSearch(context.Background(), p, data, 0, 100)))
	// Overlapping windows merge; each line appears once.
	assert.Equal(t, "1-line 1|2-line 2|3:hit 3|4-line 4|5:hit 5|6-line 6|7-line 7|9-line 9|10-line 10|11:hit 11|12-line 12",
		render(fileSearch(context.Background(), p, data, 2, 100)))
	// Collection stops after maxMatches, with that match's trailing context.
	assert.Equal(t, "2-line 2|3:hit 3|4-line 4", render(fileSearch(context.Background(), p, data, 1, 1)))
}

func TestCompileGrepPattern(t *testing.T) {
	cases := []struct {
		pattern          string
		literal, fold    bool
		line             string
		want             bool
		wantErrSubstring string
	}{
		{pattern: "a.c", line: "abc", want: true},
		{pattern: "a.c", literal: true, line: "abc", want: false},
		{pattern: "a.c", literal: true, line: "xa.cx", want: true},
		{pattern: "NEEDLE", fold: true, line: "a needle", want: true},
		{pattern: "kelvin", fold: true, line: "\u212aelvin", want: true},
		{pattern: "a$", line: "a\r", want: false},   // no CRLF mode, as in ripgrep
		{pattern: `\s+$`, line: "a \r", want: true}, // the last character before "\n" checked first
		{pattern: `\s+$`, line: "a b", want: false},
		{pattern: `\s+$`, line: "a\u00a0", want: true},
		{pattern: `[é]$`, line: "café", want: true},
		{pattern: "(?s)a.b", line: "a\nb", want: false},
		{pattern: `a[^x]b`, line: "a\nb", want: false},
		{pattern: `caf\w`, line: "café", want: true}, // Unicode classes, as in Rust
		{pattern: `\d`, line: "٣", want: true},
		{pattern: `\snbsp`, line: "\u00a0nbsp", want: true},
		{pattern: `[\w]+x`, line: "éx", want: true},
		{pattern: `\W`, line: "é", want: false},
		{pattern: `\\d`, line: `\d`, want: true},
		{pattern: `\\d`, line: "5", want: false},
		{pattern: `\p{Greek}`, line: "α", want: true},
		{pattern: `[[:alpha:]\d]`, line: "٣", want: true},
		{pattern: `\Q\d\E`, wantErrSubstring: "unrecognized escape sequence"}, // Go's \Q…\E is not Rust's
		{pattern: `[0-9]{2}`, line: "x12", want: true},                        // no literal: byte-set prefilter
		{pattern: `[0-9]{2}`, line: "x1", want: false},
		{pattern: `(é|ü)x`, line: "üx", want: true},
		{pattern: `x*`, line: "\n", want: true}, // one empty line
		{pattern: `x*`, line: "", want: false},  // an empty file has no lines
		{pattern: "x(?=y)", wantErrSubstring: "look-around"},
		{pattern: `(a)\1`, wantErrSubstring: "backreferences are not supported"},
		{pattern: "a\nb", literal: true, wantErrSubstring: `the literal '"\n"' is not allowed`},
	}
	for _, c := range cases {
		p, err := Compile(c.pattern, c.literal, c.fold)
		if c.wantErrSubstring != "" {
			require.Error(t, err, c.pattern)
			assert.Contains(t, err.Error(), c.wantErrSubstring)
			continue
		}
		require.NoError(t, err, c.pattern)
		got := len(fileSearch(context.Background(), p, []byte(c.line), 0, 10)) > 0
		assert.Equal(t, c.want, got, "%q on %q", c.pattern, c.line)
	}
	p, err := Compile(`\s+$`, false, false)
	require.NoError(t, err)
	assert.NotNil(t, p.endClass, "a pattern ending in a class and $ is checked at the line's end first")
}

// TestIndexRun compares the skipping run search with a plain scan.
func TestIndexRun(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	var set [256]bool
	set['a'], set['b'] = true, true
	for i := 0; i < 2000; i++ {
		data := make([]byte, rng.Intn(100))
		for k := range data {
			data[k] = "aab\nx"[rng.Intn(5)]
		}
		n, from := 1+rng.Intn(6), rng.Intn(len(data)+1)
		want, run := -1, 0
		for k := from; k < len(data); k++ {
			if run = run + 1; !set[data[k]] {
				run = 0
			}
			if run == n {
				want = k - n + 1
				break
			}
		}
		require.Equal(t, want, indexRun(data, from, &set, n), "%q from %d, n %d", data, from, n)
	}
	p, err := Compile(`x[0-9a-f]{32}|y`, false, false)
	require.NoError(t, err)
	assert.Nil(t, p.runSet, "no run common to both branches")
	p, err = Compile(`[A-Z][a-z]+[0-9]{2,}`, false, false)
	require.NoError(t, err)
	assert.Equal(t, 2, p.runLen, "a run of one class: two digits, not four letters or digits")
	assert.True(t, p.runSet['7'] && !p.runSet['a'])
	p, err = Compile(`[0-9a-f]{32}`, false, false)
	require.NoError(t, err)
	assert.Equal(t, 32, p.runLen)
}
