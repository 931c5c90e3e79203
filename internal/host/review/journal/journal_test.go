package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func id(s string) string { return fmt.Sprintf("%040x", []byte(s))[:40] }

func TestSpan(t *testing.T) {
	entries := []Entry{{N: 0, Commit: "c0"}, {N: 1, Commit: "c1", Parent: "c0"}, {N: 2, Commit: "c2", Parent: "c1"}, {N: 3, Commit: "c3", Parent: "c2"}}
	for _, tc := range []struct {
		spec, from, to, err string
	}{
		{"2", "c1", "c2", ""},
		{"1..3", "c0", "c3", ""},
		{"3..3", "c2", "c3", ""},
		{"0", "", "", "want a call N"},
		{"3..1", "", "", "want a call N"},
		{"4", "", "", "the journal has calls 1 to 3"},
		{"x", "", "", "want a call N"},
	} {
		from, to, err := Span(entries, tc.spec)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.spec)
			continue
		}
		require.NoError(t, err, tc.spec)
		assert.Equal(t, tc.from, from.Commit, tc.spec)
		assert.Equal(t, tc.to, to.Commit, tc.spec)
	}
	for arg, want := range map[string]bool{"3": true, "1..4": true, "src": false, "1..": false, "a..b": false, "./3": false} {
		assert.Equal(t, want, IsSpec(arg), arg)
	}
}

func TestLine(t *testing.T) {
	e := Entry{N: 4, Client: "pi", CallID: "toolu_1", Tool: "bash", Args: map[string]string{"command": "make\nmake test"}}
	assert.Equal(t, `4    pi               toolu_1            bash             command="make …"  2 file(s) +3 -1`, Line(e, 2, 3, 1))
	assert.Equal(t, `0    -                -                  (start)           0 file(s) +0 -0`, Line(Entry{Tool: StartTool}, 0, 0, 0))
}

func TestJournalFileSurvivesACut(t *testing.T) {
	j := Open(t.TempDir(), "box")
	require.NoError(t, j.Append(Entry{N: 0, Tool: StartTool, Commit: id("a"), Tree: id("b")}))
	require.NoError(t, appendRaw(j.Path, `{"n":1,"tool":"wri`))
	entries, err := j.Entries()
	require.NoError(t, err)
	assert.Len(t, entries, 1, "a line cut by a crash is skipped")
	require.NoError(t, j.Remove())
	entries, err = j.Entries()
	require.NoError(t, err)
	assert.Empty(t, entries)
	assert.Equal(t, filepath.Join(filepath.Dir(j.Path), "box.journal.jsonl"), j.Path)
}

func appendRaw(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(s)
	return err
}

func TestTarget(t *testing.T) {
	entries := []Entry{{N: 0, Commit: "c0"}, {N: 1, Commit: "c1"}, {N: 2, Commit: "c2"}, {N: 3, Commit: "c3"}}
	for _, tc := range []struct {
		to   string
		last int
		want int
		err  string
	}{
		{last: 1, want: 2},
		{last: 3, want: 0},
		{to: "0", want: 0},
		{to: "3", want: 3},
		{last: 4, err: "--last 4: the journal has 3 checkpoint(s) after the start"},
		{last: 0, err: "--last 0: "},
		{to: "4", err: "--to 4: the journal has checkpoints 0 to 3"},
		{to: "x", err: "--to x: the journal has checkpoints 0 to 3"},
	} {
		e, err := Target(entries, tc.to, tc.last)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, "%+v", tc)
			assert.NotErrorIs(t, err, ErrEmpty)
			continue
		}
		require.NoError(t, err, "%+v", tc)
		assert.Equal(t, tc.want, e.N, "%+v", tc)
	}
	_, err := Target(nil, "", 1)
	assert.ErrorIs(t, err, ErrEmpty)
}

func TestDescribeAndUndone(t *testing.T) {
	assert.Equal(t, "nothing: the start", Describe(Entry{N: 0, Tool: StartTool}))
	assert.Equal(t, "write toolu_1", Describe(Entry{N: 2, Tool: "write", CallID: "toolu_1"}))
	assert.Equal(t, "shell", Describe(Entry{N: 3, Tool: "shell"}))
	assert.Equal(t, "reset the workspace of box to checkpoint 2 (after write toolu_1); this undo is checkpoint 5: undo --last 1 takes it back",
		Undone("box", Entry{N: 2, Tool: "write", CallID: "toolu_1"}, Entry{N: 5}))
}
