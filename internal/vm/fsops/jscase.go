package fsops

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// jsLower is JavaScript's String.prototype.toLowerCase as Node 22 (ICU 78, Unicode 17)
// computes it, where Go's strings.ToLower (Unicode 15 tables) differs: U+0130 becomes
// "i" + combining dot above; the case pairs Unicode 16 and 17 added lower (newerLower);
// and a capital sigma is final sigma (ς) at the end of a word — preceded by a cased
// letter and not followed by one, case-ignorable characters skipped between.
func jsLower(s string) string {
	if !strings.ContainsFunc(s, needsJSLower) {
		return strings.ToLower(s)
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == 'İ':
			b.WriteString("i\u0307")
		case r == 'Σ':
			if finalSigma(s, i) {
				b.WriteRune('ς')
			} else {
				b.WriteRune('σ')
			}
		default:
			if l, ok := newerLower(r); ok {
				b.WriteRune(l)
			} else {
				b.WriteRune(unicode.ToLower(r))
			}
		}
	}
	return b.String()
}

func needsJSLower(r rune) bool {
	_, newer := newerLower(r)
	return r == 'İ' || r == 'Σ' || newer
}

// newerLower is the lowercase of the capitals Unicode 16 and 17 added, which Go's
// tables do not know yet (Node's toLowerCase does: compared code point by code point in
// conformance TestLsCollationClasses' companion check).
func newerLower(r rune) (rune, bool) {
	switch {
	case r == 0x1C89:
		return 0x1C8A, true // Cyrillic TJE
	case r == 0xA7CB:
		return 0x0264, true
	case r == 0xA7CC, r == 0xA7CE, r == 0xA7DA:
		return r + 1, true
	case r == 0xA7D2, r == 0xA7D4:
		return r + 1, true
	case r == 0xA7DC:
		return 0x019B, true
	case r >= 0x10D50 && r <= 0x10D65:
		return r + 0x20, true // Garay
	case r >= 0x16EA0 && r <= 0x16EB8:
		return r + 0x1B, true // Beria Erfe
	}
	return 0, false
}

// finalSigma is Unicode's Final_Sigma condition for the capital sigma at byte i of s.
func finalSigma(s string, i int) bool {
	before := false
	for j := i; j > 0; {
		r, n := utf8.DecodeLastRuneInString(s[:j])
		j -= n
		if caseIgnorable(r) {
			continue
		}
		before = cased(r)
		break
	}
	if !before {
		return false
	}
	for _, r := range s[i+len("Σ"):] {
		if caseIgnorable(r) {
			continue
		}
		return !cased(r)
	}
	return true
}

// cased is Unicode's Cased property.
func cased(r rune) bool {
	return unicode.In(r, unicode.Lu, unicode.Ll, unicode.Lt, unicode.Other_Lowercase, unicode.Other_Uppercase)
}

// caseIgnorable is Unicode's Case_Ignorable property: marks, format characters, modifier
// letters and symbols, and the word-break MidLetter, MidNumLet and Single_Quote characters.
func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '^', '`', 0x00A8, 0x00AD, 0x00AF, 0x00B4, 0x00B7, 0x00B8, 0x0387, 0x055F, 0x05F4,
		0x2018, 0x2019, 0x2024, 0x2027, 0xFE13, 0xFE52, 0xFE55, 0xFF07, 0xFF0E, 0xFF1A:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}
