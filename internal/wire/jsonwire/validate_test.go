package jsonwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// envelopeCases are lines whose validity the envelope parser must judge as
// encoding/json does.
var envelopeCases = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a":[1,2,{"b":null}],"c":"d"}`, `{"a":-0.5e+10}`, `{"a":1E-2}`,
	`{"a":"\u00e9\n\"\\\/"}`, `{"a":true,"b":false,"c":null}`, `{"jsonrpc":"2.0","id":1,"method":"x","params":{}}`,
	`{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":-}`,
	`{"a":1e}`, `{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\x01\"}", `{"a":tru}`, `{"a":nul}`, `{"a":[1,]}`,
	`{"a":[}`, `{"a":1}}`, `{"a":1} x`, `{a:1}`, `{"a":"unterminated}`, `{"a":+1}`, `[1]`, `1`, `"s"`, ``,
	`{"a":[[[[[[]]]]]]}`, `{"a":{"b":{"c":{}}}}`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}",
}

func TestValidMembersAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range envelopeCases {
		err := ValidMembers([]byte(c), ignore)
		valid := err == nil || errors.Is(err, ErrNotObject)
		assert.Equal(t, json.Valid([]byte(c)), valid, "%q: %v", c, err)
	}
	deep := strings.Repeat("[", 2000) + strings.Repeat("]", 2000)
	err := ValidMembers([]byte(`{"a":`+deep+`}`), ignore)
	assert.ErrorIs(t, err, ErrSyntax, "nesting is bounded")
}

func FuzzValidMembers(f *testing.F) {
	for _, c := range envelopeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := ValidMembers(b, ignore)
		valid := err == nil || errors.Is(err, ErrNotObject)
		if valid != json.Valid(b) && !bytes.Contains(b, []byte("[[[[")) {
			t.Fatalf("%q: parser says valid=%v (%v), encoding/json %v", b, valid, err, json.Valid(b))
		}
		if valid {
			// The walks over validated text find the same end.
			start := SkipSpace(b, 0)
			if end := ValueEnd(b, start); end != start+len(TrimSpace(b)) {
				t.Fatalf("%q: ValueEnd says %d", b, end)
			}
		}
	})
}

// TestLongStringsCheckedByBlocks: a string long enough to be checked 64 bytes at a time
// is accepted and refused exactly as when checked byte by byte, with the same error, for
// a fault at every place around block boundaries, after runs of backslashes of either
// parity, and at the end.
func TestLongStringsCheckedByBlocks(t *testing.T) {
	units := []string{`plain \n\t\"quoted\" \\ \u00e9 \ud83d\ude00 日本 `, `\\\\\\\"`, `\\\\`, `x`}
	faults := []string{"\x01", `\x`, `\u12`, `\`, `"`, `\\`, `\u00e9`}
	for _, unit := range units {
		body := strings.Repeat(unit, 4*blockMin/len(unit)+3)
		valid := `{"a":"` + body + `"}`
		require.True(t, json.Valid([]byte(valid)))
		err := ValidMembers([]byte(valid), ignore)
		require.NoError(t, err)
		for at := 0; at <= len(body); at++ {
			if at > 300 && at < len(body)-100 && at%61 != 0 {
				continue // every place near the start and the end, some in between
			}
			for _, f := range faults {
				line := []byte(`{"a":"` + body[:at] + f + body[at:] + `"}`)
				got := ValidMembers(line, ignore)
				_, alone := scanString(line, len(`{"a":"`), len(line))
				if errors.Is(alone, errNoQuote) {
					alone = fmt.Errorf("%w: unterminated string", ErrSyntax)
				}
				if json.Valid(line) {
					require.NoError(t, got, "fault %q at %d of %q", f, at, unit)
					continue
				}
				require.Error(t, got, "fault %q at %d of %q", f, at, unit)
				if alone != nil {
					require.Equal(t, alone.Error(), got.Error(), "fault %q at %d of %q", f, at, unit)
				}
			}
		}
	}
}

// FuzzValidBlocks: checking a string 64 bytes at a time agrees with checking it byte by
// byte, on any bytes (repeated to reach several blocks).
func FuzzValidBlocks(f *testing.F) {
	for _, s := range []string{`abc\"`, `\\\\\\"`, "x\x01", `\u00e9\ud83d`, `"`, `\u12"`, `\`, `\\`} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, unit []byte, times uint8) {
		if len(unit) == 0 {
			return
		}
		b := append([]byte{'"'}, bytes.Repeat(unit, int(times)%16+(blockMin/len(unit))+1)...)
		end, ok := validBlocks(b, 0)
		wantEnd, err := scanString(b, 1, len(b))
		if ok != (err == nil) || (ok && end != wantEnd) {
			t.Fatalf("%q: by blocks %d %v, byte by byte %d %v", b, end, ok, wantEnd, err)
		}
	})
}

func ignore(_, _ []byte) {}
