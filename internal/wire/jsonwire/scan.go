// The walks below go over JSON text that has already been validated: it finds where
// values end without checking them again, so that a message validated once on arrival
// (a 30 MB write's arguments) is not re-validated by every later look at its members.
// Strings are skipped with a vectorised search for their closing quote.

package jsonwire

import "bytes"

// SkipSpace returns the index of the first non-whitespace byte of b at or after i.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// TrimSpace returns b without leading and trailing JSON whitespace.
func TrimSpace(b []byte) []byte {
	i := SkipSpace(b, 0)
	j := len(b)
	for j > i && (b[j-1] == ' ' || b[j-1] == '\t' || b[j-1] == '\n' || b[j-1] == '\r') {
		j--
	}
	return b[i:j]
}

// StringEnd returns the index after the string literal starting at b[i] (a '"'), or -1
// if it does not end.
func StringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		i += j
		// The quote ends the string unless an odd run of backslashes escapes it (the
		// opening quote stops the run).
		k := i
		for b[k-1] == '\\' {
			k--
		}
		if (i-k)%2 == 0 {
			return i + 1
		}
	}
	return -1
}

// ValueEnd returns the index after the JSON value starting at b[i], or -1.
func ValueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return StringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = StringEnd(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	default:
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
			i++
		}
		return i
	}
}

// Members calls fn with the raw name (between its quotes, escapes as written) and the
// raw value of each member of the object at the start of obj, in order. It reports
// false if obj does not start with an object.
func Members(obj []byte, fn func(key, val []byte)) bool {
	i := SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	for i = SkipSpace(obj, i+1); i < len(obj) && obj[i] == '"'; {
		keyEnd := StringEnd(obj, i)
		if keyEnd < 0 {
			return false
		}
		key := obj[i+1 : keyEnd-1]
		i = SkipSpace(obj, keyEnd)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		i = SkipSpace(obj, i+1)
		end := ValueEnd(obj, i)
		if end < 0 {
			return false
		}
		fn(key, obj[i:end])
		if i = SkipSpace(obj, end); i < len(obj) && obj[i] == ',' {
			i = SkipSpace(obj, i+1)
		}
	}
	return true
}

// Elements calls fn with each raw element of the array at the start of arr; it reports
// false if arr does not start with an array.
func Elements(arr []byte, fn func(val []byte)) bool {
	i := SkipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return false
	}
	for i = SkipSpace(arr, i+1); i < len(arr) && arr[i] != ']'; {
		end := ValueEnd(arr, i)
		if end < 0 {
			return false
		}
		fn(arr[i:end])
		if i = SkipSpace(arr, end); i < len(arr) && arr[i] == ',' {
			i = SkipSpace(arr, i+1)
		}
	}
	return true
}

// Member returns the raw value of the last member of the object obj named name (as
// decoders keep the last), or nil.
func Member(obj []byte, name string) []byte {
	var found []byte
	Members(obj, func(key, val []byte) {
		if string(key) == name {
			found = val
		}
	})
	return found
}

// Hex4 decodes the four hex digits at the start of b (a \u escape's); ok is false if
// there are not four.
func Hex4(b []byte) (r rune, ok bool) {
	if len(b) < 4 {
		return 0, false
	}
	for _, c := range b[:4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, false
		}
	}
	return r, true
}

// Cut returns an index in [from, to) of a string literal's content b[:to] at which the
// content may be cut in two and each part decoded or checked on its own, with the same
// result as the whole: the start of an escape other than \u (so no escape, nor a UTF-16
// surrogate pair, spans the cut), or, where no backslash follows from, a point past any
// escape begun before it and not inside a UTF-8 sequence. from must lie in the content, after its opening quote; Cut
// returns -1 if there is no such index.
func Cut(b []byte, from, to int) int {
	past := from + 6 // an escape begun before from ends within six bytes of it
	for p := from; p < to; {
		q := bytes.IndexByte(b[p:to], '\\')
		if q < 0 {
			// Past every escape, and not inside a UTF-8 sequence.
			for c := max(p, past); c < to; c++ {
				if b[c]&0xc0 != 0x80 {
					return c
				}
			}
			return -1
		}
		q += p
		run := 0 // backslashes just before q: an even number means q begins an escape
		for k := q - 1; k >= 0 && b[k] == '\\'; k-- {
			run++
		}
		if run%2 == 0 && q+1 < to && b[q+1] != 'u' {
			return q
		}
		if run%2 == 0 {
			past = max(past, q+6) // a \u escape
		}
		p = q + 1
	}
	return -1
}
