//go:build e2e

package conformance

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// lsCollationClasses are classes of names whose order needs ICU's current
// data (pi's Node: ICU 78, Unicode 17), where golang.org/x/text/collate's Unicode 6.2
// tables put many of them elsewhere. No two names of a class are equal once lowercased
// and collated, since pi keeps such ties in readdir order, which the filesystem decides.
var lsCollationClasses = map[string][]string{
	// Emoji of Unicode 9 to 16 among older ones; sequences with joiners, modifiers,
	// keycaps and flags.
	"emoji": {"😀", "🤣", "🥰", "🫨", "🩷", "🛜", "🫩", "🪉", "🫟", "✅", "☕", "🏳️‍🌈", "👍🏽", "👍", "1️⃣", "🇩🇪", "🇫🇷", "a", "z", "🪾tree", "🫆print"},
	// Capitals Unicode 16 and 17 added (lowercased by ls first), their small letters, and
	// older case pairs around them.
	"newer case pairs": {"\u1C89a", "\u1C8Ab", "тc", "\uA7CBd", "ɤe", "\uA7CCf", "\uA7CDg", "\uA7DCh", "ƛi", "\U00010D50j", "\U00010D70k", "\U00010D51l", "\U00016EA0m", "\U00016EBBn", "\U00016EA1o", "ǆp", "ǅq", "ǲr", "ꞵs", "Ꞵt"},
	// JavaScript's final sigma: ς at the end of a word, σ elsewhere.
	"final sigma": {"ΟΔΟΣ", "οδοσ", "ΑΣ.txt", "ασ.txt2", "ΑΣ-x", "ας-x2", "Σ", "σα", "ΣΑ2", "ΣΣ", "σς3", "ΌΣΟΣ", "όσοσ4", "ΣΊΣΥΦΟΣ"},
	// Scripts old and new (Kawi, Nag Mundari, Vithkuqi, Tangsa, Toto, Sunuwar, Kirat Rai,
	// Tulu-Tigalari, Gurung Khema, Ol Onal, Todhri), Thai and Lao prevowels, Latin
	// letters that expand.
	"mixed scripts": {"latin", "ελληνικά", "кириллица", "հայերեն", "עברית", "العربية", "हिन्दी", "বাংলা", "ไทย", "เกม", "ແກ້ວ", "ქართული", "한국어", "ひらがな", "カタカナ", "カード", "漢字", "中文", "ኢትዮጵያ", "ᏣᎳᎩ", "\U00011F04\U00011F05", "\U0001E4D0\U0001E4D1", "\U00010570\U00010571", "\U00016A70\U00016A71", "\U0001E290\U0001E291", "\U00011BC0\U00011BC1", "\U00016D43\U00016D44", "\U00011380\U00011381", "\U00016100\U00016101", "\U0001E5D0\U0001E5D1", "\U000105C0\U000105C1", "Ölfarbe", "ölig2", "Zürich", "zurich2", "Ærø", "aero2", "Straße", "strasse2", "Łódź", "lodz2", "Ǆemal"},
	// Digits of several scripts, fractions, super- and subscripts, separators.
	"digits": {"1", "01", "10", "2", "٢b", "۳", "¹x", "½", "①", "𝟙x", "१a", "๑b", "1a", "1.5", "1,5", "1_5", "1-5", "9", "99", "100", "0", "007", "\U00011067c"},
	// Punctuation and symbols before a letter, and a space.
	"punctuation": {"_x", "-x", ",x", ";x", ":x", "!x", "?x", ".x", "'x", "\"x", "(x", ")x", "[x", "]x", "{x", "}x", "@x", "*x", "\\x", "&x", "#x", "%x", "`x", "^x", "+x", "<x", ">x", "=x", "|x", "~x", "$x", "¡x", "¿x", "«x", "»x", "§x", "¶x", "…x", "–x", "—x", "‐x", "・x", "、x", "。x", "※x", "€x", "£x", "¥x", "x", " x"},
	// Combining marks: decomposed and precomposed, out of canonical order, a mark Unicode
	// 17 added, Hebrew and Arabic points, a virama, enclosing and overlay marks.
	"combining marks": {"e\u0301a", "éb", "e\u0300c", "ed", "a\u0301\u0316x", "a\u0316\u0301y", "áz", "x\u1AD5", "x\u0301", "x", "o\u0308", "ö2", "n\u0303", "ñ2", "и\u0306a", "йb", "иc", "שָׁלוֹם", "שלום2", "كَتَبَ", "كتب2", "क्ष", "कष2", "a\u20DD", "a\u0338b", "ạ\u0302", "ậ2", "ǘ", "ü\u0301x"},
}

// TestLsCollationClasses: ls of one directory per class, and of one holding them all,
// as pi orders them.
func TestLsCollationClasses(t *testing.T) {
	root := t.TempDir()
	var calls []Call
	all := filepath.Join(root, "all")
	require.NoError(t, os.Mkdir(all, 0o755))
	for class, names := range lsCollationClasses {
		dir := filepath.Join(root, class)
		require.NoError(t, os.Mkdir(dir, 0o755))
		for i, name := range names {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o644))
			if class == "mixed scripts" || i%3 == 0 {
				require.NoError(t, os.WriteFile(filepath.Join(all, name), nil, 0o644))
			}
		}
		calls = append(calls, Call{"ls", dir, map[string]any{}})
	}
	calls = append(calls, Call{"ls", all, map[string]any{}})
	want := oracle(t, calls)
	for i, c := range calls {
		require.Equal(t, want[i], local(t, c), "ls of %s", filepath.Base(c.Cwd))
	}
}

// TestLsRandomNamesAsPi: ls of a directory of 1,500 random names from all of Unicode 17
// (conformance/lsnames.mjs), as pi orders them.
func TestLsRandomNamesAsPi(t *testing.T) {
	var names []string
	require.NoError(t, json.Unmarshal(runNode(t, "lsnames.mjs", []byte(`{"seed":24,"count":1500}`)), &names))
	dir := t.TempDir()
	for _, name := range names {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o644))
	}
	call := Call{"ls", dir, map[string]any{"limit": 2000}}
	want := oracle(t, []Call{call})[0]
	require.Len(t, want.Content, 1)
	require.NotContains(t, want.Content[0].Text, "limit reached", "all names listed")
	require.Equal(t, want, local(t, call))
}
