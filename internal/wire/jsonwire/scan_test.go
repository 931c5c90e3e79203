package jsonwire

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStringEnd(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{`""`, 2},
		{`"a"`, 3},
		{`"a\"b"x`, 6},
		{`"a\\"b"`, 5},
		{`"a\\\"b"`, 8},
		{`"\\\\"`, 6},
		{`"` + strings.Repeat(`x\"`, 100) + `"`, 302},
		{`"unterminated`, -1},
		{`"escaped at the end\"`, -1},
	} {
		assert.Equal(t, tc.want, StringEnd([]byte(tc.in), 0), tc.in)
	}
}

// TestWalksAgreeWithEncodingJSON: on valid JSON of every shape, ValueEnd finds the end
// of each value and Members/Elements see what encoding/json decodes.
func TestWalksAgreeWithEncodingJSON(t *testing.T) {
	docs := []string{
		`{}`, `[]`, `{"a":1}`, ` { "a" : [ 1 , "x\"]}" , {"b":null} ] , "c\\":"\\" , "d":true } `,
		`{"k":"` + strings.Repeat(`line \"quoted\"\\n\\`+"\u00e9", 1000) + `","n":-1.5e3,"z":[[],[{}]]}`,
		`[1,"two",{"three":[3]},null,false]`,
		`{"a":1,"a":2}`,
	}
	for _, doc := range docs {
		b := []byte(doc)
		i := SkipSpace(b, 0)
		end := ValueEnd(b, i)
		assert.Equal(t, len(TrimSpace(b))+i, end, doc)
		var want map[string]json.RawMessage
		if json.Unmarshal(b, &want) == nil {
			got := map[string]string{}
			require.True(t, Members(b, func(k, v []byte) {
				var name string
				require.NoError(t, json.Unmarshal([]byte(`"`+string(k)+`"`), &name))
				got[name] = string(v)
			}))
			require.Len(t, got, len(want), doc)
			for k, v := range want {
				assert.JSONEq(t, string(v), got[k], "%s in %s", k, doc)
				if !strings.Contains(k, `\`) {
					assert.Equal(t, got[k], string(Member(b, k)))
				}
			}
			continue
		}
		var arr []json.RawMessage
		require.NoError(t, json.Unmarshal(b, &arr), doc)
		var got []string
		require.True(t, Elements(b, func(v []byte) { got = append(got, string(v)) }))
		require.Len(t, got, len(arr))
		for i := range arr {
			assert.JSONEq(t, string(arr[i]), got[i])
		}
	}
	assert.False(t, Members([]byte(`[1]`), func(_, _ []byte) {}))
	assert.False(t, Elements([]byte(`{}`), func([]byte) {}))
	assert.Nil(t, Member([]byte(`{"a":1}`), "b"))
}

// TestCut checks every cut point Cut returns on literals with every kind of escape: the
// two parts decode to the whole.
func TestCut(t *testing.T) {
	lits := []string{
		`"plain text that has no escape at all, long enough"`,
		`"a\nb\tc\"d\\e\/f\u00e9g\ud83d\ude00h\\\\i\\\"j"`,
		`"\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\n"`,
		`"\ud83d\ude00\ud83d\ude00\ud83d\ude00\ud83d\ude00\n\ud83d\ude00"`,
		`"日本語\n日本語\t日本語 plain plain plain plain"`,
	}
	// And generated ones: every escape json.Marshal writes, mixed at random.
	rnd := rand.New(rand.NewSource(1))
	palette := []rune{'a', 'b', '\n', '\t', '"', '\\', '<', '&', 'é', '😀', '\u2028', 0x01}
	for range 30 {
		var sb strings.Builder
		for range 60 {
			sb.WriteRune(palette[rnd.Intn(len(palette))])
		}
		lit, _ := json.Marshal(sb.String())
		lits = append(lits, string(lit))
	}
	for _, lit := range lits {
		var whole string
		require.NoError(t, json.Unmarshal([]byte(lit), &whole), lit)
		for from := 1; from < len(lit)-1; from++ {
			cut := Cut([]byte(lit), from, len(lit)-1)
			if cut < 0 {
				continue
			}
			require.GreaterOrEqual(t, cut, from)
			var a, b string
			require.NoError(t, json.Unmarshal([]byte(lit[:cut]+`"`), &a), "%s cut at %d", lit, cut)
			require.NoError(t, json.Unmarshal([]byte(`"`+lit[cut:]), &b), "%s cut at %d", lit, cut)
			require.Equal(t, whole, a+b, "%s cut at %d", lit, cut)
		}
	}
}
