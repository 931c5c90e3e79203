package shell

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func feed(t *testing.T, chunks ...string) *output {
	t.Helper()
	o := newOutput(t.TempDir(), "pi-bash")
	for _, c := range chunks {
		o.append([]byte(c))
	}
	o.finish()
	t.Cleanup(func() { o.close() })
	return o
}

func TestOutputUnderLimitsKeepsNoFile(t *testing.T) {
	o := feed(t, "a\n", "b")
	s := o.snapshot(true)
	assert.Equal(t, "a\nb", s.truncation.Content)
	assert.False(t, s.truncation.Truncated)
	assert.Nil(t, s.truncation.TruncatedBy)
	assert.Equal(t, 2, s.truncation.TotalLines)
	assert.Empty(t, s.path)
}

// Invalid UTF-8 is counted as decoded text (U+FFFD is 3 bytes), as pi counts it, while
// the file keeps the raw bytes.
func TestOutputCountsDecodedBytes(t *testing.T) {
	raw := strings.Repeat("\xff", 20000) // 20000 raw bytes, 60000 decoded
	o := feed(t, raw)
	s := o.snapshot(true)
	assert.True(t, s.truncation.Truncated)
	assert.Equal(t, 60000, s.truncation.TotalBytes)
	assert.True(t, s.truncation.LastLinePartial)
	require.NoError(t, o.close())
	got, err := os.ReadFile(s.path)
	require.NoError(t, err)
	assert.Equal(t, raw, string(got))
}

// Memory stays bounded: the tail never holds more than 4 × 50KB plus one chunk, and
// nothing else grows with the output.
func TestOutputBoundedMemory(t *testing.T) {
	o := newOutput(t.TempDir(), "pi-bash")
	defer o.close()
	chunk := bytes.Repeat([]byte("0123456789abcdef\n"), readChunk/17)
	for i := 0; i < 400; i++ { // ~100 MB
		o.append(chunk)
		require.LessOrEqual(t, len(o.tail), 2*o.rolling+len(chunk))
		require.Nil(t, o.early)
	}
	assert.LessOrEqual(t, cap(o.tail), 2*(2*o.rolling+len(chunk)))
	o.finish()
	s := o.snapshot(true)
	assert.Equal(t, 400*len(chunk), s.truncation.TotalBytes)
	assert.Equal(t, 400*(readChunk/17), s.truncation.TotalLines)
	assert.Equal(t, "lines", *s.truncation.TruncatedBy)
	require.NoError(t, o.close())
	st, err := os.Stat(s.path)
	require.NoError(t, err)
	assert.Equal(t, int64(400*len(chunk)), st.Size())
}

// Once the tail was trimmed mid-line, that partial first line is not shown, as in pi.
func TestOutputTrimmedTailDropsPartialLine(t *testing.T) {
	long := strings.Repeat("x", 300*1024)
	o := feed(t, long, "\nshort\n")
	s := o.snapshot(true)
	assert.Equal(t, "short\n", s.truncation.Content)
	assert.Equal(t, "bytes", *s.truncation.TruncatedBy)
	assert.Equal(t, 2, s.truncation.TotalLines)
	assert.Equal(t, 1, s.truncation.OutputLines)
}
