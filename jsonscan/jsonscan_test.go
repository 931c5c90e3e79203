package jsonscan

import (
	"encoding/json"
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
