package grepmatch

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRustRegexErrors pins ripgrep 13's error text for a set of hand-picked patterns and
// each error class (texts taken from `rg`; conformance/search_regex_test.go compares
// thousands of generated patterns with rg itself).
func TestRustRegexErrors(t *testing.T) {
	block := func(pattern, carets, msg string) string {
		return "regex parse error:\n    " + pattern + "\n    " + carets + "\nerror: " + msg
	}
	pcre2 := "\n\nConsider enabling PCRE2 with the --pcre2 flag, which can handle backreferences\nand look-around."
	cases := []struct{ pattern, want string }{
		{"func main() {", block("func main() {", "            ^", "unclosed counted repetition")},
		{"{{name}}", block("{{name}}", "^", "repetition operator missing expression")},
		{`\/api\/v1`, block(`\/api\/v1`, "^^", "unrecognized escape sequence")},
		{`\"version\"`, block(`\"version\"`, "^^", "unrecognized escape sequence")},
		{`\<word\>`, block(`\<word\>`, "^^", "unrecognized escape sequence")},
		{"(?<n>x)", block("(?<n>x)", "  ^", "unrecognized flag")},
		{"a{,3}", block("a{,3}", "  ^", "repetition quantifier expects a valid decimal")},
		{`\b{start}`, block(`\b{start}`, "   ^", "repetition quantifier expects a valid decimal")},
		{"(?i-i-)", block("(?i-i-)", "  ^ ^", "duplicate flag")},
		{"(?P<a>x)(?P<a>y)", block("(?P<a>x)(?P<a>y)", "    ^       ^", "duplicate capture group name")},
		{"((a)", block("((a)", "^", "unclosed group")},
		{"a)", block("a)", " ^", "unopened group")},
		{`\p{Foo}`, block(`\p{Foo}`, "^^^^^^^", "Unicode property not found")},
		{`\p{sc=Foo}`, block(`\p{sc=Foo}`, "^^^^^^^^^^", "Unicode property value not found")},
		{`\P{Any}`, block(`\P{Any}`, "^^^^^^^", "empty character classes are not allowed")},
		{`[^\x00-\x{10FFFF}]`, block(`[^\x00-\x{10FFFF}]`, "^^^^^^^^^^^^^^^^^^", "empty character classes are not allowed")},
		{"(?-u)é", block("(?-u)é", "     ^", "Unicode not allowed here")},
		{"[z-a]", block("[z-a]", " ^^^", "invalid character class range, the start must be <= the end")},
		{"a{3,2}", block("a{3,2}", " ^^^^^", "invalid repetition count range, the start must be <= the end")},
		{"(?!a)", block("(?!a)", "^^^", "look-around, including look-ahead and look-behind, is not supported") + pcre2},
		{`(a)\1`, block(`(a)\1`, "   ^^", "backreferences are not supported") + pcre2},
		{"a\n(", "regex parse error:\n" + strings.Repeat("~", 79) + "\n1: a\n2: (\n   ^\n" + strings.Repeat("~", 79) + "\nerror: unclosed group"},
		{`\n`, "the literal '\"\\n\"' is not allowed in a regex\n\nConsider enabling multiline mode with the --multiline flag (or -U for short).\nWhen multiline mode is enabled, new line characters can be matched."},
		{`[\n]`, "the literal '\"\\n\"' is not allowed in a regex\n\nConsider enabling multiline mode with the --multiline flag (or -U for short).\nWhen multiline mode is enabled, new line characters can be matched."},
	}
	for _, c := range cases {
		_, err := Compile(c.pattern, false, false)
		if assert.Error(t, err, c.pattern) {
			assert.Equal(t, c.want, err.Error(), c.pattern)
		}
	}
}

// TestRustRegexMeaning checks that patterns rg accepts (and Go's syntax reads
// differently or rejects) match as in rg.
func TestRustRegexMeaning(t *testing.T) {
	cases := []struct {
		pattern, line string
		fold          bool
		want          bool
	}{
		{`\u0041BC`, "xABC", false, true},
		{"a**", "b", false, true},
		{"a{2}{3}", "aaaaaa", false, true},
		{"a{2}{3}", "aaaaa", false, false},
		{"a{1001}", strings.Repeat("a", 1001), false, true},
		{"a{1001}", strings.Repeat("a", 1000), false, false},
		{"(?:a{2}){501}", strings.Repeat("a", 1002), false, true},
		{"(?x) a b # comment", "ab", false, true},
		{`^[a-z--[aeiou]]+$`, "bcd", false, true},
		{`^[a-z--[aeiou]]+$`, "bad", false, false},
		{`[\w&&\p{Greek}]`, "λ", false, true},
		{`[\w&&\p{Greek}]`, "x", false, false},
		{`[a-c~~b-d]`, "b", false, false},
		{`[a-c~~b-d]`, "d", false, true},
		{`\p{Greek}`, "α", false, true},
		{`\p{IsGreek}`, "α", false, true},
		{`\p{scx=Grek}`, "α", false, true},
		{`\pN`, "٣", false, true},
		{`\x{e9}`, "café", false, true},
		{`\Ab`, "b", false, true}, // ripgrep searches line by line: \A and \z are line anchors
		{`b\z`, "ab", false, true},
		{"(?i)k", "\u212a", false, true},
		{"K", "k", true, true},
		{"(?-i)K", "k", true, false},
		{"[^a]", "A", true, false}, // folded before negation, as in Rust
		{`(?s).`, "x", false, true},
		// ASCII lines run an ASCII-only form of the pattern: folds into ASCII count.
		{"ſ", "s", true, true},
		{"\u212a", "K", true, true},
		{`\w+_\d`, "ab_1", false, true},
		{`[^a]`, "é", false, true},
		{`\W`, "-", false, true},
		// L1.*L2 patterns are matched as literals in order, without the regexp.
		{"a.*b", "ba", false, false},
		{"a.*b", "xaxxb", false, true},
		{"aa.*aa", "aaa", false, false}, // no overlap
		{"aa.*aa", "aaaa", false, true},
		{"func.*zzq", "FUNC x ZzQ", true, true},
		{"func.*zzq", "zzq func", true, false},
		{".*x.*?y.*", "--x--y--", false, true},
		{`\.{2}`, "a.b.c", true, false}, // adjacent literals are not a chain
		{"needle=", "needle x =", true, false},
		// What follows the prefilter literal is tested first, at each occurrence.
		{`\w+_\d{3}\b`, "a_123", false, true},
		{`\w+_\d{3}\b`, "a_12", false, false},
		{`\w+_\d{3}\b`, "a_1234", false, false},
		{`\w+_\d{3}\b`, "x_ab y_123 z", false, true},
		{`a_\bx`, "a_x", false, false},
		{`(?i)x_[a-z]+$`, "X_abc", false, true},
		{`[A-Z][a-z]+Error\(`, "err.Error()", false, false},
		{`[A-Z][a-z]+Error\(`, "x.Error() NewError(", false, true},
		{`\d+Error`, "٣Error", false, true},
		// Word boundaries are Unicode-aware, as in ripgrep (Go's are ASCII-only).
		{`\bcafé\b`, "un café noir", false, true},
		{`\bcaf\b`, "un café noir", false, false},
		{`é\b`, "café", false, true},
		{`\Bé`, "café", false, true},
		{`(?-u:\b)x`, "éx", false, true}, // ASCII boundary with Unicode off
		{`\bx`, "éx", false, false},
		{`\bnaïve\b|zzz`, "a naïve idea", false, true},
		{`(?i)\bNAÏVE\b`, "a naïve idea", false, true},
		{`\w+\b\s\d{2,3}`, "αβγ 12", false, true},
		{`^\b.+\b$`, "ünï", false, true},
		{`x_\d\b`, "x_1é", false, false}, // the after-literal test must not decide this
		{`x_\d\B`, "x_1é", false, true},
	}
	for _, c := range cases {
		p, err := Compile(c.pattern, false, c.fold)
		require.NoError(t, err, c.pattern)
		got := len(fileSearch(context.Background(), p, []byte(c.line+"\n"), 0, 10)) > 0
		assert.Equal(t, c.want, got, "%q on %q", c.pattern, c.line)
	}
}

// TestRustRegexLiteral covers literal mode: escaped for the regex engine, folded with
// ignoreCase, and refused when it holds a newline (as rg --fixed-strings does).
func TestRustRegexLiteral(t *testing.T) {
	p, err := Compile("a.b(", true, false)
	require.NoError(t, err)
	assert.True(t, p.re.MatchString("xa.b(y"))
	assert.False(t, p.re.MatchString("axb("))
	p, err = Compile("Straße", true, true)
	require.NoError(t, err)
	assert.True(t, p.re.MatchString("STRAßE"))
	_, err = Compile("a\nb", true, false)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), `the literal '"\n"' is not allowed in a regex`))
}
