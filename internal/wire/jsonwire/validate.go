package jsonwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// maxDepth bounds nesting, as the SDK's own decoder does.
const maxDepth = 1000

// ErrSyntax is what every validation error wraps.
var ErrSyntax = errors.New("not valid JSON")

// ErrTooDeep wraps ErrSyntax for a value nested deeper than the validator goes: the
// text may well be JSON, so a caller can still look for what it needs outside the deep
// value (a request's id).
var ErrTooDeep = fmt.Errorf("%w: nested deeper than %d", ErrSyntax, maxDepth)

// ErrNotObject is a valid JSON value that is not the object wanted.
var ErrNotObject = errors.New("not a JSON object")

// skipValue validates the JSON value starting at b[i] and returns the index after it.
func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return i, fmt.Errorf("%w: unexpected end", ErrSyntax)
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return i, fmt.Errorf("%w at byte %d", ErrTooDeep, i)
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i = SkipSpace(b, i+1)
		if i < len(b) && b[i] == closer {
			return i + 1, nil
		}
		for {
			if c == '{' {
				if i >= len(b) || b[i] != '"' {
					return i, fmt.Errorf("%w: want a member name at byte %d", ErrSyntax, i)
				}
				end, err := skipString(b, i)
				if err != nil {
					return end, err
				}
				i = SkipSpace(b, end)
				if i >= len(b) || b[i] != ':' {
					return i, fmt.Errorf("%w: want ':' at byte %d", ErrSyntax, i)
				}
				i = SkipSpace(b, i+1)
			}
			end, err := skipValue(b, i, depth+1)
			if err != nil {
				return end, err
			}
			i = SkipSpace(b, end)
			if i < len(b) && b[i] == ',' {
				i = SkipSpace(b, i+1)
				continue
			}
			if i < len(b) && b[i] == closer {
				return i + 1, nil
			}
			return i, fmt.Errorf("%w: want ',' or '%c' at byte %d", ErrSyntax, closer, i)
		}
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(b, i)
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	default:
		return i, fmt.Errorf("%w: unexpected byte %q at %d", ErrSyntax, c, i)
	}
}

func skipLiteral(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, fmt.Errorf("%w: bad literal at byte %d", ErrSyntax, i)
	}
	return i + len(lit), nil
}

// skipString validates the string starting at b[i] (a '"') and returns the index after
// its closing quote. A long string (a large write's content) is checked 64 bytes at a
// time where the CPU classifies them fast (AVX2); the error of one that is not valid is
// found byte by byte.
func skipString(b []byte, i int) (int, error) {
	if len(b)-i >= blockMin && ClassifyFast() {
		if end, ok := validBlocks(b, i); ok {
			return end, nil
		}
	}
	end, err := scanString(b, i+1, len(b))
	if errors.Is(err, errNoQuote) {
		err = fmt.Errorf("%w: unterminated string", ErrSyntax)
	}
	return end, err
}

// blockMin is the length from which a string is checked by blocks.
const blockMin = 256

// validBlocks checks the string starting at b[i] by JSON's rules, 64 bytes at a time,
// from each block's quotes, backslashes and control bytes (Classify): the
// closing quote is the first one no backslash escapes, a control byte before it is an
// error, and so is an escaped byte that begins no escape (a \u must have four hex
// digits). ok is false when the string is not valid or does not end in b; the rest after
// the last whole block is checked by scanString.
func validBlocks(b []byte, i int) (end int, ok bool) {
	var c Classes
	p := i + 1
	var carry uint64 // 1: the block's first byte is escaped
	// One block first, then twice as many each time: most strings are short.
	for want := 1; len(b)-p >= 64; want = min(2*want, ClassifyBlocks) {
		n := min((len(b)-p)/64, want)
		Classify(b[p:p+64*n], &c)
		for k := 0; k < n; k, p = k+1, p+64 {
			esc := Escaped(c.Backslash[k], &carry)
			closing := c.Quote[k] &^ esc
			before := ^uint64(0) // the bytes before the closing quote, if in this block
			if closing != 0 {
				before = closing&-closing - 1
			}
			if (c.Control[k]|esc&^c.Escape[k])&before != 0 {
				return 0, false // a control byte, or an escape of a byte that begins none
			}
			for u := esc & c.U[k] & before; u != 0; u &= u - 1 {
				at := p + bits.TrailingZeros64(u)
				if len(b)-at < 5 || !isHex(b[at+1]) || !isHex(b[at+2]) || !isHex(b[at+3]) || !isHex(b[at+4]) {
					return 0, false
				}
			}
			if closing != 0 {
				return p + bits.TrailingZeros64(closing) + 1, true
			}
		}
	}
	if carry != 0 {
		p-- // from the backslash that escapes the next byte
	}
	end, err := scanString(b, p, len(b))
	return end, err == nil
}

// errNoQuote: scanString reached its bound inside the string.
var errNoQuote = errors.New("no closing quote")

// scanString validates string content from b[i] and returns the index after its closing
// quote, or errNoQuote if none comes before b[to].
func scanString(b []byte, i, to int) (int, error) {
	for {
		// Eight bytes at a time while none is a quote, a backslash or a control byte.
		for i+8 <= to && !specialIn(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		for i < to && plain[b[i]] {
			i++
		}
		if i >= to {
			return i, errNoQuote
		}
		switch c := b[i]; c {
		case '"':
			return i + 1, nil
		case '\\':
			if i+1 >= to {
				return i, errNoQuote
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if to-i < 6 || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					if to < len(b) && to-i < 6 {
						return i, errNoQuote // the bound cuts the escape: not the string's end
					}
					return i, fmt.Errorf("%w: bad \\u escape at byte %d", ErrSyntax, i)
				}
				i += 6
			default:
				return i, fmt.Errorf("%w: bad escape at byte %d", ErrSyntax, i)
			}
		default:
			return i, fmt.Errorf("%w: control character in string at byte %d", ErrSyntax, i)
		}
	}
}

// specialIn reports whether any of the eight bytes of x is '"', '\\' or below 0x20
// (the classic SWAR tests for a zero byte and for a byte less than n).
func specialIn(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	hasZero := func(v uint64) uint64 { return (v - ones) &^ v & highs }
	return (hasZero(x^(ones*'"')) | hasZero(x^(ones*'\\')) | (x-ones*0x20)&^x&highs) != 0
}

// plain marks the bytes a string may contain without an escape.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func skipNumber(b []byte, i int) (int, error) {
	start := i
	if b[i] == '-' {
		i++
	}
	digits := func() bool {
		s := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > s
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return i, fmt.Errorf("%w: bad number at byte %d", ErrSyntax, start)
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return i, fmt.Errorf("%w: bad number at byte %d", ErrSyntax, start)
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return i, fmt.Errorf("%w: bad number at byte %d", ErrSyntax, start)
		}
	}
	return i, nil
}

// ValidMembers validates line as one JSON object (whitespace around it allowed) and
// calls member with each member's raw name (as written, escapes and all) and value, in
// order. A syntax error wraps ErrSyntax; a valid value that is not an object is
// ErrNotObject.
func ValidMembers(line []byte, member func(key, val []byte)) error {
	i := SkipSpace(line, 0)
	if i == len(line) {
		return ErrSyntax
	}
	if line[i] != '{' {
		end, err := skipValue(line, i, 0)
		if err != nil {
			return err
		}
		if SkipSpace(line, end) != len(line) {
			return fmt.Errorf("%w: trailing data", ErrSyntax)
		}
		return ErrNotObject
	}
	i = SkipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		i++
	} else {
		for {
			if i >= len(line) || line[i] != '"' {
				return fmt.Errorf("%w: want a member name at byte %d", ErrSyntax, i)
			}
			keyEnd, err := skipString(line, i)
			if err != nil {
				return err
			}
			key := line[i+1 : keyEnd-1] // escaped member names match nothing below
			i = SkipSpace(line, keyEnd)
			if i >= len(line) || line[i] != ':' {
				return fmt.Errorf("%w: want ':' at byte %d", ErrSyntax, i)
			}
			i = SkipSpace(line, i+1)
			end, err := skipValue(line, i, 1)
			if err != nil {
				return err
			}
			member(key, line[i:end])
			i = SkipSpace(line, end)
			if i < len(line) && line[i] == ',' {
				i = SkipSpace(line, i+1)
				continue
			}
			if i < len(line) && line[i] == '}' {
				i++
				break
			}
			return fmt.Errorf("%w: want ',' or '}' at byte %d", ErrSyntax, i)
		}
	}
	if SkipSpace(line, i) != len(line) {
		return fmt.Errorf("%w: trailing data after the object", ErrSyntax)
	}
	return nil
}
