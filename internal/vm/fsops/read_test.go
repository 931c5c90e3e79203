package fsops

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/truncate"
)

// referenceSelect is pi's selectLinesFromBuffer, written as plainly as pi writes it: the
// whole file in memory, split, sliced and cut by truncate.Head. The streamed selection
// must agree with it everywhere.
func referenceSelect(content []byte, startLine float64, limit *float64) lineSelection {
	all := strings.Split(decodeLossy(content), "\n")
	n := int64(len(all))
	endF := float64(n)
	if limit != nil {
		endF = math.Min(startLine+*limit, float64(n))
	}
	start, end := sliceBounds(startLine, endF, n)
	if end < start {
		end = start
	}
	tr := truncate.Head(strings.Join(all[start:end], "\n"), truncate.Options{})
	var first int64
	if tr.FirstLineExceedsLimit {
		first = int64(len(all[start]))
	}
	return lineSelection{totalFileLines: n, trunc: tr, firstLineBytes: first}
}

func readOf(t testing.TB, dir, content string, offset, limit *float64) (result.Result, error) {
	t.Helper()
	p := filepath.Join(dir, "f.txt")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return Read(context.Background(), dir, ReadArgs{Path: "f.txt", Offset: offset, Limit: limit})
}

func fp(f float64) *float64 { return &f }

// FuzzReadOffsetLimit checks the streamed line selection against the whole-file
// reference for arbitrary contents, offsets and limits, through Read itself.
func FuzzReadOffsetLimit(f *testing.F) {
	seeds := []struct {
		content       string
		offset, limit float64
	}{
		{"line1\nline2\r\nfoo bar\n", 0, 1},
		{"a\nb\nc", 2, 0},
		{"", 1, 5},
		{"\n\n\n", 3, 1},
		{"x", 1, -1},
		{strings.Repeat("y\n", 2500), 10, 3000},
		{strings.Repeat("z", 60000) + "\nshort", 1, 2},
		{"short\n" + strings.Repeat("é", 30000), 2, 1},
		{"a\xffb\xe2\x82\nc\xed\xa0\x80", 1, 2},
		{strings.Repeat(strings.Repeat("w", 99)+"\n", 600), 100, 1000},
		{"\uFEFFbom\nline", 0, 10},
	}
	for _, s := range seeds {
		f.Add([]byte(s.content), s.offset, s.limit)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, content []byte, offset, limit float64) {
		if math.IsNaN(offset) || math.IsNaN(limit) || math.IsInf(offset, 0) || math.IsInf(limit, 0) ||
			math.Abs(offset) > 1e9 || math.Abs(limit) > 1e9 {
			t.Skip("JSON numbers from a model are finite and small")
		}
		p := filepath.Join(dir, "f.txt")
		require.NoError(t, os.WriteFile(p, content, 0o644))
		startLine := 0.0
		if offset != 0 {
			startLine = math.Max(0, offset-1)
		}
		var lim *float64
		if limit >= 0 && limit == math.Trunc(limit) {
			lim = &limit // streamable when offset is whole too
		}
		got, err := selectFileLines(context.Background(), p, startLine, ReadArgs{Offset: &offset, Limit: lim}, nil)
		require.NoError(t, err)
		want := referenceSelect(content, startLine, lim)
		assert.Equal(t, want.totalFileLines, got.totalFileLines, "line count")
		if startLine < float64(want.totalFileLines) {
			assert.Equal(t, want.trunc, got.trunc, "truncation")
			if want.trunc.FirstLineExceedsLimit {
				assert.Equal(t, want.firstLineBytes, got.firstLineBytes, "first line size")
			}
		}
	})
}

func TestReadNotices(t *testing.T) {
	dir := t.TempDir()
	numbered := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "%d\n", i)
		}
		return b.String()
	}
	tests := []struct {
		name          string
		content       string
		offset, limit *float64
		want          string
		wantErr       string
	}{
		{name: "reference §9", content: "line1\nline2\r\nfoo bar\n", limit: fp(1),
			want: "line1\n\n[3 more lines in file. Use offset=2 to continue.]"},
		{name: "beyond end", content: "a\nb\n", offset: fp(4), wantErr: "Offset 4 is beyond end of file (3 lines total)"},
		{name: "lines", content: numbered(2001), want: strings.TrimSuffix(numbered(2000), "\n") +
			"\n\n[Showing lines 1-2000 of 2002. Use offset=2001 to continue.]"},
		{name: "first line too long", content: strings.Repeat("x", 52480), want: "[Line 1 is 51.3KB, exceeds 50.0KB limit. Use bash: sed -n '1p' f.txt | head -c 51200]"},
		{name: "limit zero", content: "a\nb", limit: fp(0), want: "\n\n[2 more lines in file. Use offset=1 to continue.]"},
		{name: "fractional", content: "a\nb\nc\nd", offset: fp(2.5), limit: fp(1),
			want: "b\n\n[1.5 more lines in file. Use offset=3.5 to continue.]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := readOf(t, dir, tt.content, tt.offset, tt.limit)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Len(t, res.Content, 1)
			assert.Equal(t, tt.want, res.Content[0].Text)
		})
	}
}

// TestReadHugeSparseFile reads a 2 GiB file that is one line of zero bytes: pi's notice,
// with the whole line measured, while the process allocates a tiny fraction of the file.
func TestReadHugeSparseFile(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 2 GiB")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "huge.bin")
	require.NoError(t, os.WriteFile(p, []byte("start\n"), 0o644))
	require.NoError(t, os.Truncate(p, 2<<30))

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := Read(context.Background(), dir, ReadArgs{Path: "huge.bin", Offset: fp(2)})
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Equal(t, "[Line 2 is 2048.0MB, exceeds 50.0KB limit. Use bash: sed -n '2p' huge.bin | head -c 51200]", res.Content[0].Text)
	allocated := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, allocated, uint64(16<<20), "bytes allocated to read a 2 GiB file")

	// The whole-file path (a negative limit) refuses as Node's fs.readFile does.
	_, err = Read(context.Background(), dir, ReadArgs{Path: "huge.bin", Limit: fp(-1)})
	assert.EqualError(t, err, "File size (2147483648) is greater than 2 GiB")
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "file"), []byte("x"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "dir"), 0o755))
	tests := []struct{ path, want string }{
		{"missing", fmt.Sprintf("ENOENT: no such file or directory, access '%s/missing'", dir)},
		{"file/x", fmt.Sprintf("ENOTDIR: not a directory, access '%s/file/x'", dir)},
		{"dir", "EISDIR: illegal operation on a directory, read"},
	}
	for _, tt := range tests {
		_, err := Read(context.Background(), dir, ReadArgs{Path: tt.path})
		assert.EqualError(t, err, tt.want, tt.path)
	}
	if os.Getuid() != 0 {
		require.NoError(t, os.Chmod(filepath.Join(dir, "file"), 0))
		_, err := Read(context.Background(), dir, ReadArgs{Path: "file"})
		assert.EqualError(t, err, fmt.Sprintf("EACCES: permission denied, access '%s/file'", dir))
	}
}

func TestReadCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Read(ctx, t.TempDir(), ReadArgs{Path: "x"})
	assert.EqualError(t, err, "Operation aborted")
}

// TestReadDetailsShape checks details serialize as pi's: {truncation:{…}} or absent.
func TestReadDetailsShape(t *testing.T) {
	dir := t.TempDir()
	res, err := readOf(t, dir, strings.Repeat("a\n", 2100), nil, nil)
	require.NoError(t, err)
	b, err := json.Marshal(res.Details)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"truncatedBy":"lines"`)
	res, err = readOf(t, dir, "small", nil, nil)
	require.NoError(t, err)
	assert.Nil(t, res.Details)
}
