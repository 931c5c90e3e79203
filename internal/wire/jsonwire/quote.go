package jsonwire

import (
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"
)

// ExactString decodes a validated JSON string and reports whether the result re-encodes
// to the same value: valid UTF-8 and no unpaired surrogate escape.
func ExactString(raw []byte) (string, bool) {
	if !Exact(raw) {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// Exact reports whether validated JSON decodes to strings that re-encode to the same
// values: it is valid UTF-8 and every surrogate escape is one of a pair. (Backslashes
// occur only in strings, so any JSON value can be scanned as one.)
func Exact(raw []byte) bool {
	if !utf8.Valid(raw) {
		return false
	}
	for i := 0; i < len(raw)-1; i++ {
		if raw[i] != '\\' {
			continue
		}
		if raw[i+1] != 'u' {
			i++
			continue
		}
		r, _ := Hex4(raw[i+2:])
		switch {
		case utf16.IsSurrogate(r) && r < 0xdc00:
			// A high surrogate must be followed by an escaped low one.
			if i+12 > len(raw) || raw[i+6] != '\\' || raw[i+7] != 'u' {
				return false
			}
			lo, _ := Hex4(raw[i+8:])
			if lo < 0xdc00 || lo > 0xdfff {
				return false
			}
			i += 11
		case utf16.IsSurrogate(r):
			return false
		default:
			i += 5
		}
	}
	return true
}

// Unquote decodes a short validated JSON string (a method name, a version tag).
func Unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// AppendString appends s as a JSON string as the SDK writes its own messages
// (encoding/json without HTML escaping).
func AppendString(dst []byte, s string) []byte { return appendJSONString(dst, s, &jsonSafe) }

// AppendHTMLString appends s as a JSON string as json.Marshal writes it, HTML-escaped
// (the SDK encodes content blocks so).
func AppendHTMLString(dst []byte, s string) []byte { return appendJSONString(dst, s, &htmlSafe) }

// jsonSafe and htmlSafe mark the ASCII bytes encoding/json copies as they are, without
// and with HTML escaping.
var jsonSafe, htmlSafe = func() (plain, html [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		plain[c] = c != '"' && c != '\\'
		html[c] = plain[c] && c != '<' && c != '>' && c != '&'
	}
	return plain, html
}()

// appendJSONString is encoding/json's string encoding, byte for byte: \b \f \n \r \t
// and \uXXXX for the other control bytes (and those safe does not mark), U+FFFD for
// invalid UTF-8, U+2028 and U+2029 escaped.
func appendJSONString(dst []byte, s string, safe *[utf8.RuneSelf]bool) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
