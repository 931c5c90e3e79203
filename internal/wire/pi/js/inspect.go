package js

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Inspect formats s as Node's util.inspect formats a string with its default options:
// quoted (single quotes; double, then backticks, when the string holds single quotes),
// control characters, C1 controls, the backslash and the chosen quote escaped, and a
// string longer than 76 UTF-16 units split after each line break into quoted pieces
// joined by " +\n  ". Invalid UTF-8 bytes count as U+FFFD (what Node would have decoded).
func Inspect(s string) string {
	if n := utf16Len(s); n > 16 && n > 80-4 {
		pieces := strings.SplitAfter(s, "\n")
		if pieces[len(pieces)-1] == "" {
			pieces = pieces[:len(pieces)-1]
		}
		quoted := make([]string, len(pieces))
		for i, p := range pieces {
			quoted[i] = quote(p)
		}
		return strings.Join(quoted, " +\n  ")
	}
	return quote(s)
}

// InvalidArgValue is Node's ERR_INVALID_ARG_VALUE message for the argument (or property,
// when name has a dot) name holding value: the value inspected, cut to 128 UTF-16 units.
func InvalidArgValue(name, value, reason string) string {
	inspected := Inspect(value)
	if units := utf16.Encode([]rune(inspected)); len(units) > 128 {
		inspected = string(utf16.Decode(units[:128])) + "..."
	}
	kind := "argument"
	if strings.Contains(name, ".") {
		kind = "property"
	}
	return fmt.Sprintf("The %s '%s' %s. Received %s", kind, name, reason, inspected)
}

func quote(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 {
		switch {
		case strings.IndexByte(s, '"') < 0:
			q = '"'
		case strings.IndexByte(s, '`') < 0 && !strings.Contains(s, "${"):
			q = '`'
		}
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) && q == '\'':
			b.WriteString(`\'`)
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x20 || r >= 0x7f && r <= 0x9f:
			switch r {
			case '\b':
				b.WriteString(`\b`)
			case '\t':
				b.WriteString(`\t`)
			case '\n':
				b.WriteString(`\n`)
			case '\f':
				b.WriteString(`\f`)
			case '\r':
				b.WriteString(`\r`)
			default:
				fmt.Fprintf(&b, `\x%02X`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 && r <= utf8.MaxRune {
			n += 2
		} else {
			n++
		}
	}
	return n
}
