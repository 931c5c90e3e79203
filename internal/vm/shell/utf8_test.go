package shell

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func decodeAll(chunks ...string) string {
	var d utf8Decoder
	var out []byte
	for _, c := range chunks {
		out = append(out, d.decode([]byte(c))...)
	}
	return string(append(out, d.flush()...))
}

// Expected values follow the WHATWG decoder (what TextDecoder produces): one U+FFFD per
// maximal invalid subpart.
func TestUTF8DecoderReplacesLikeTextDecoder(t *testing.T) {
	const r = "\uFFFD"
	tests := []struct {
		name   string
		chunks []string
		want   string
	}{
		{"ascii", []string{"hello\n"}, "hello\n"},
		{"valid multibyte", []string{"é€😀"}, "é€😀"},
		{"truncated sequence then ascii", []string{"\xE2\x82A"}, r + "A"},
		{"overlong lead", []string{"\xC0\xAF"}, r + r},
		{"surrogate", []string{"\xED\xA0\x80"}, r + r + r},
		{"F0 needs 90..BF", []string{"\xF0\x80\x80"}, r + r + r},
		{"above U+10FFFF", []string{"\xF4\x90\x80\x80"}, r + r + r + r},
		{"lone continuation", []string{"a\x80b"}, "a" + r + "b"},
		{"split euro", []string{"\xE2\x82", "\xAC"}, "€"},
		{"split emoji 1+3", []string{"x\xF0", "\x9F\x98\x80y"}, "x😀y"},
		{"split then invalid", []string{"\xE2", "A"}, r + "A"},
		{"dangling at end", []string{"ok\xE2\x82"}, "ok" + r},
		{"newline ends a sequence", []string{"\xE2\n"}, r + "\n"},
		{"FF byte", []string{"\xFF"}, r},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := decodeAll(tt.chunks...); got != tt.want {
				t.Errorf("decode(%q) = %q, want %q", tt.chunks, got, tt.want)
			}
		})
	}
}

// Chunk boundaries must not change the text.
func TestUTF8DecoderSplitAnywhere(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("a\n\x80\xBF\xC2\xDF\xE0\xA0\xED\x9F\xEF\xF0\x90\xF4\x8F\xFFé")
	for i := 0; i < 2000; i++ {
		in := make([]byte, rng.IntN(12))
		for j := range in {
			in[j] = alphabet[rng.IntN(len(alphabet))]
		}
		whole := decodeAll(string(in))
		cut := rng.IntN(len(in) + 1)
		cut2 := cut + rng.IntN(len(in)-cut+1)
		if got := decodeAll(string(in[:cut]), string(in[cut:cut2]), string(in[cut2:])); got != whole {
			t.Fatalf("%q split at %d,%d: %q, whole: %q", in, cut, cut2, got, whole)
		}
		if bytes.Count([]byte(whole), []byte{'\n'}) != bytes.Count(in, []byte{'\n'}) {
			t.Fatalf("%q: newlines changed: %q", in, whole)
		}
	}
}
