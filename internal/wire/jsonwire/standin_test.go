package jsonwire

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var unescapeCases = []string{
	`""`, `"plain"`, `"a\"b\\c\/d"`, `"\b\f\n\r\t"`, `"\u00e9\u4e2d"`, `"\ud83d\ude00"`, `"\uD83D\uDE00"`,
	`"lone \ud800 high"`, `"lone \udc00 low"`, `"\ud800\u0041"`, `"end \ud800"`, "\"raw \xff byte\"",
	`"日本語"`, `"\u0000\u001f"`, `"x\\"`,
}

func TestUnescapeMatchesEncodingJSON(t *testing.T) {
	for _, c := range unescapeCases {
		var want string
		require.NoError(t, json.Unmarshal([]byte(c), &want), c)
		got, err := Unescape([]byte(c))
		require.NoError(t, err, c)
		assert.Equal(t, want, got, c)
	}
}

func FuzzUnescape(f *testing.F) {
	for _, c := range unescapeCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lit, _ := json.Marshal(s)
		for _, l := range []string{string(lit), `"` + s + `"`} {
			var want string
			if json.Unmarshal([]byte(l), &want) != nil {
				continue
			}
			got, err := Unescape([]byte(l))
			if err != nil || got != want {
				t.Fatalf("%q: got %q (%v), want %q", l, got, err, want)
			}
		}
	})
}

// TestOffloadSpliceRoundTrip: large strings (at any depth, except under "edits") are set
// aside; splicing restores the same JSON value; resolving a decoded struct restores
// the same strings; nothing small is touched.
func TestOffloadSpliceRoundTrip(t *testing.T) {
	big := strings.Repeat("line with \"quotes\"\tand \\ escapes é\n", 4000)
	bigLit, _ := json.Marshal(big)
	params := `{"name":"edit","arguments":{"path":"a.txt","edits":[{"oldText":` + string(bigLit) + `,"newText":"small"}],` +
		`"edits2":` + string(bigLit) + `},"_meta":{"progressToken":"t"}}`
	s := NewStore("edits")
	small, keys := s.Offload([]byte(params))
	assert.Len(t, keys, 2)
	assert.Less(t, len(small), 1000, "%s", small)
	assert.Equal(t, 2, s.Len())
	var generic map[string]any
	require.NoError(t, json.Unmarshal(small, &generic))

	// What the SDK and validation see and re-marshal still splices back.
	remarshalled, err := json.Marshal(generic)
	require.NoError(t, err)
	var want, got any
	require.NoError(t, json.Unmarshal([]byte(params), &want))
	require.NoError(t, json.Unmarshal(s.Splice(remarshalled), &got))
	assert.Equal(t, want, got)
	var joined []byte
	for _, p := range s.Segments(remarshalled) {
		joined = append(joined, p...)
	}
	assert.Equal(t, s.Splice(remarshalled), joined)

	// A tool's decode resolves them.
	var args struct {
		Path  string `json:"path"`
		Edits []struct {
			OldText string `json:"oldText"`
			NewText string `json:"newText"`
		} `json:"edits"`
		Other any `json:"edits2"`
	}
	argsRaw, _ := json.Marshal(generic["arguments"])
	require.NoError(t, json.Unmarshal(argsRaw, &args))
	assert.NotEqual(t, big, args.Edits[0].OldText)
	require.NoError(t, s.Resolve(&args))
	assert.Equal(t, big, args.Edits[0].OldText)
	assert.Equal(t, "small", args.Edits[0].NewText)
	assert.Equal(t, big, args.Other)

	s.Drop(keys)
	assert.Zero(t, s.Len())

	// "edits" given as one JSON-encoded string stays whole where the store keeps it:
	// preparation parses it. A store that keeps nothing sets it aside.
	enc, _ := json.Marshal(`[{"oldText":"` + strings.Repeat("x", MinSize) + `","newText":"y"}]`)
	kept, keys := s.Offload([]byte(`{"arguments":{"edits":` + string(enc) + `}}`))
	assert.Empty(t, keys)
	assert.Contains(t, string(kept), strings.Repeat("x", 100))
	_, keys = NewStore().Offload([]byte(`{"arguments":{"edits":` + string(enc) + `}}`))
	assert.Len(t, keys, 1)
}

func TestStandInsAreNotGuessable(t *testing.T) {
	a, b := NewStore(), NewStore()
	big, _ := json.Marshal(strings.Repeat("z", MinSize))
	small, _ := a.Offload([]byte(`{"c":` + string(big) + `}`))
	assert.Equal(t, string(small), string(b.Splice(small)), "another connection's store resolves nothing")
	var v struct{ C string }
	require.NoError(t, json.Unmarshal(small, &v))
	require.NoError(t, b.Resolve(&v), "another connection's store resolves nothing")
	assert.True(t, strings.HasPrefix(v.C, "\x00pi-sbx-bigarg:"))
	var none *Store
	require.NoError(t, none.Resolve(&v), "no store: nothing to do")
	assert.True(t, strings.HasPrefix(v.C, "\x00pi-sbx-bigarg:"))
}

// TestValueIsWhatAStandInStandsFor: Value gives a stand-in's decoded string, and any
// other string (another store's stand-in, a plain one; any string without a store) as
// it is.
func TestValueIsWhatAStandInStandsFor(t *testing.T) {
	s := NewStore()
	want := strings.Repeat("é\n", MinSize)
	big, _ := json.Marshal(want)
	small, keys := s.Offload([]byte(`{"c":` + string(big) + `}`))
	require.Len(t, keys, 1)
	var v struct{ C string }
	require.NoError(t, json.Unmarshal(small, &v))
	assert.Equal(t, want, s.Value(v.C))
	assert.Equal(t, v.C, NewStore().Value(v.C), "another store's")
	assert.Equal(t, "plain", s.Value("plain"))
	var none *Store
	assert.Equal(t, v.C, none.Value(v.C), "no store")
	s.Drop(keys)
	assert.Equal(t, v.C, s.Value(v.C), "dropped")
}

// sourceLiteral is Go source as a JSON string literal, with an escape every ten bytes or
// so (line feeds, tabs, quotes, json.Marshal's \u003c): what a large write carries.
func sourceLiteral(tb testing.TB, size int) []byte {
	tb.Helper()
	src, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "fmt", "print.go"))
	require.NoError(tb, err)
	content := bytes.Repeat(src, size/len(src)+1)[:size]
	lit, err := json.Marshal(string(content))
	require.NoError(tb, err)
	return lit
}

// TestUnescapeLongLiteralsInHalves: literals long enough to be decoded in two halves at
// once decode as encoding/json decodes them, wherever the middle falls (between escapes,
// in a surrogate pair, in a UTF-8 sequence, in a run of backslashes), and invalid ones
// are still decoded as encoding/json does.
func TestUnescapeLongLiteralsInHalves(t *testing.T) {
	units := []string{`ab\n`, `\t\"q\"`, `\\\\\\`, `\u00e9`, `\ud83d\ude00`, `\ud800x`, `日本`, `\u003c/a\u003e`, `plain text `}
	rnd := rand.New(rand.NewSource(7))
	for round := 0; round < 12; round++ {
		tail := ""
		if round%4 == 3 {
			tail = "\xff" // invalid UTF-8: encoding/json's U+FFFD
		}
		decodesAsJSON(t, randomLiteral(rnd, units, splitMin*2+round*37, tail))
	}
}

// randomLiteral is a string literal of at least n bytes of units drawn at random, then
// tail.
func randomLiteral(rnd *rand.Rand, units []string, n int, tail string) []byte {
	var sb strings.Builder
	sb.WriteByte('"')
	for sb.Len() < n {
		sb.WriteString(units[rnd.Intn(len(units))])
	}
	sb.WriteString(tail)
	sb.WriteByte('"')
	return []byte(sb.String())
}

// decodesAsJSON checks that Unescape decodes lit as encoding/json does.
func decodesAsJSON(t *testing.T, lit []byte) {
	t.Helper()
	var want string
	require.NoError(t, json.Unmarshal(lit, &want))
	got, err := Unescape(lit)
	require.NoError(t, err)
	require.True(t, want == got, "%d bytes decoded, want %d: %.200q", len(got), len(want), lit)
}

// TestUnescapeMixedEscapes: literals of 64 to 364 bytes mixing every kind of escape at
// every place (surrogate pairs and runs of backslashes across the eight-byte steps too)
// decode as encoding/json decodes them.
func TestUnescapeMixedEscapes(t *testing.T) {
	units := []string{`a`, `\n`, `\\`, `\"`, `\u00e9`, `\ud83d\ude00`, `\ud800`, `é`, `\/`, `\u003c`, "\xff"}
	rnd := rand.New(rand.NewSource(9))
	for round := 0; round < 3000; round++ {
		decodesAsJSON(t, randomLiteral(rnd, units, 63+rnd.Intn(300), ""))
	}
}
