package mcpserver

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/pi-sbx/pi-sbx-backend/jsonwire"
)

// This file is the JSON-RPC framing of the stdio transport: one validating pass over a
// line finds the envelope's members as sub-slices of it (a 30 MB write's arguments are
// neither copied nor decoded here), and messages are encoded without re-validating the
// JSON the SDK itself produced.

// maxDepth bounds nesting, as the SDK's own decoder does.
const maxDepth = 1000

// envelope is one message's top-level members, raw; nil when absent.
type envelope struct {
	version, id, method, params, result, errObj []byte
}

// set notes a member of the envelope; a repeated member keeps the last value, as
// encoding/json does, and other members are ignored.
func (env *envelope) set(key, val []byte) {
	switch string(key) {
	case "jsonrpc":
		env.version = val
	case "id":
		env.id = val
	case "method":
		env.method = val
	case "params":
		env.params = val
	case "result":
		env.result = val
	case "error":
		env.errObj = val
	}
}

var errSyntax = errors.New("not valid JSON")

// parseEnvelope validates line as one JSON object and returns its members. A syntax
// error wraps errSyntax; a valid value that is not an object returns errNotObject.
func parseEnvelope(line []byte) (envelope, error) {
	var env envelope
	i := jsonwire.SkipSpace(line, 0)
	if i == len(line) {
		return env, errSyntax
	}
	if line[i] != '{' {
		end, err := skipValue(line, i, 0)
		if err != nil {
			return env, err
		}
		if jsonwire.SkipSpace(line, end) != len(line) {
			return env, fmt.Errorf("%w: trailing data", errSyntax)
		}
		return env, errNotObject
	}
	i = jsonwire.SkipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		i++
	} else {
		for {
			if i >= len(line) || line[i] != '"' {
				return env, fmt.Errorf("%w: want a member name at byte %d", errSyntax, i)
			}
			keyEnd, err := skipString(line, i)
			if err != nil {
				return env, err
			}
			key := line[i+1 : keyEnd-1] // escaped member names match nothing below
			i = jsonwire.SkipSpace(line, keyEnd)
			if i >= len(line) || line[i] != ':' {
				return env, fmt.Errorf("%w: want ':' at byte %d", errSyntax, i)
			}
			i = jsonwire.SkipSpace(line, i+1)
			end, err := skipValue(line, i, 1)
			if err != nil {
				return env, err
			}
			env.set(key, line[i:end])
			i = jsonwire.SkipSpace(line, end)
			if i < len(line) && line[i] == ',' {
				i = jsonwire.SkipSpace(line, i+1)
				continue
			}
			if i < len(line) && line[i] == '}' {
				i++
				break
			}
			return env, fmt.Errorf("%w: want ',' or '}' at byte %d", errSyntax, i)
		}
	}
	if jsonwire.SkipSpace(line, i) != len(line) {
		return env, fmt.Errorf("%w: trailing data after the object", errSyntax)
	}
	return env, nil
}

var errNotObject = errors.New("not a JSON object")

// walkEnvelope finds the members of a line that its writer has validated, without
// checking them again; ok is false if the line does not walk as one object.
func walkEnvelope(line []byte) (env envelope, ok bool) {
	ok = jsonwire.Members(line, env.set)
	return env, ok
}

// skipValue validates the JSON value starting at b[i] and returns the index after it.
func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return i, fmt.Errorf("%w: unexpected end", errSyntax)
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return i, fmt.Errorf("%w: nested deeper than %d", errSyntax, maxDepth)
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i = jsonwire.SkipSpace(b, i+1)
		if i < len(b) && b[i] == closer {
			return i + 1, nil
		}
		for {
			if c == '{' {
				if i >= len(b) || b[i] != '"' {
					return i, fmt.Errorf("%w: want a member name at byte %d", errSyntax, i)
				}
				end, err := skipString(b, i)
				if err != nil {
					return end, err
				}
				i = jsonwire.SkipSpace(b, end)
				if i >= len(b) || b[i] != ':' {
					return i, fmt.Errorf("%w: want ':' at byte %d", errSyntax, i)
				}
				i = jsonwire.SkipSpace(b, i+1)
			}
			end, err := skipValue(b, i, depth+1)
			if err != nil {
				return end, err
			}
			i = jsonwire.SkipSpace(b, end)
			if i < len(b) && b[i] == ',' {
				i = jsonwire.SkipSpace(b, i+1)
				continue
			}
			if i < len(b) && b[i] == closer {
				return i + 1, nil
			}
			return i, fmt.Errorf("%w: want ',' or '%c' at byte %d", errSyntax, closer, i)
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
		return i, fmt.Errorf("%w: unexpected byte %q at %d", errSyntax, c, i)
	}
}

func skipLiteral(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, fmt.Errorf("%w: bad literal at byte %d", errSyntax, i)
	}
	return i + len(lit), nil
}

// skipString validates the string starting at b[i] (a '"') and returns the index after
// its closing quote. A long string (a large write's content) is checked 64 bytes at a
// time where the CPU classifies them fast (AVX2); the error of one that is not valid is
// found byte by byte.
func skipString(b []byte, i int) (int, error) {
	if len(b)-i >= blockMin && jsonwire.ClassifyFast() {
		if end, ok := validBlocks(b, i); ok {
			return end, nil
		}
	}
	end, err := scanString(b, i+1, len(b))
	if errors.Is(err, errNoQuote) {
		err = fmt.Errorf("%w: unterminated string", errSyntax)
	}
	return end, err
}

// blockMin is the length from which a string is checked by blocks.
const blockMin = 256

// validBlocks checks the string starting at b[i] by JSON's rules, 64 bytes at a time,
// from each block's quotes, backslashes and control bytes (jsonwire.Classify): the
// closing quote is the first one no backslash escapes, a control byte before it is an
// error, and so is an escaped byte that begins no escape (a \u must have four hex
// digits). ok is false when the string is not valid or does not end in b; the rest after
// the last whole block is checked by scanString.
func validBlocks(b []byte, i int) (end int, ok bool) {
	var c jsonwire.Classes
	p := i + 1
	var carry uint64 // 1: the block's first byte is escaped
	// One block first, then twice as many each time: most strings are short.
	for want := 1; len(b)-p >= 64; want = min(2*want, jsonwire.ClassifyBlocks) {
		n := min((len(b)-p)/64, want)
		jsonwire.Classify(b[p:p+64*n], &c)
		for k := 0; k < n; k, p = k+1, p+64 {
			esc := jsonwire.Escaped(c.Backslash[k], &carry)
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
					return i, fmt.Errorf("%w: bad \\u escape at byte %d", errSyntax, i)
				}
				i += 6
			default:
				return i, fmt.Errorf("%w: bad escape at byte %d", errSyntax, i)
			}
		default:
			return i, fmt.Errorf("%w: control character in string at byte %d", errSyntax, i)
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
		return i, fmt.Errorf("%w: bad number at byte %d", errSyntax, start)
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return i, fmt.Errorf("%w: bad number at byte %d", errSyntax, start)
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return i, fmt.Errorf("%w: bad number at byte %d", errSyntax, start)
		}
	}
	return i, nil
}

// idError says why a request id cannot be carried through the SDK exactly.
type idError struct{ reason string }

func (e *idError) Error() string { return e.reason }

// maxExactID is the largest integer magnitude the SDK's ids (decoded as float64, then
// kept as int64) carry without rounding.
const maxExactID = 1 << 53

// parseID turns a raw, validated id into the SDK's typed id. It refuses every id the SDK
// would answer with a different value: numbers not written as plain integers (3.0, 2e0,
// -0), fractions, integers beyond ±2^53, and strings whose escapes do not survive
// decoding (lone surrogates, invalid UTF-8). Objects, arrays and booleans are not ids.
func parseID(raw []byte) (jsonrpc.ID, error) {
	switch c := raw[0]; {
	case c == 'n':
		return jsonrpc.ID{}, nil
	case c == '"':
		s, ok := exactString(raw)
		if !ok {
			return jsonrpc.ID{}, &idError{"its escapes or bytes are not valid Unicode (a lone surrogate or invalid UTF-8), so it would come back changed"}
		}
		return jsonrpc.MakeID(s)
	case c == '-' || (c >= '0' && c <= '9'):
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || string(raw) == "-0" {
			return jsonrpc.ID{}, &idError{"it is not written as a plain integer (no fraction, exponent or -0) in the int64 range"}
		}
		if n > maxExactID || n < -maxExactID {
			return jsonrpc.ID{}, &idError{"its magnitude exceeds 2^53, beyond which ids are rounded"}
		}
		return jsonrpc.MakeID(float64(n))
	default:
		return jsonrpc.ID{}, &idError{"an id must be a string, a number or null"}
	}
}

// exactString decodes a validated JSON string and reports whether the result re-encodes
// to the same value: valid UTF-8 and no unpaired surrogate escape.
func exactString(raw []byte) (string, bool) {
	if !exactJSON(raw) {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// exactJSON reports whether validated JSON decodes to strings that re-encode to the same
// values: it is valid UTF-8 and every surrogate escape is one of a pair. (Backslashes
// occur only in strings, so any JSON value can be scanned as one.)
func exactJSON(raw []byte) bool {
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
		r, _ := jsonwire.Hex4(raw[i+2:])
		switch {
		case utf16.IsSurrogate(r) && r < 0xdc00:
			// A high surrogate must be followed by an escaped low one.
			if i+12 > len(raw) || raw[i+6] != '\\' || raw[i+7] != 'u' {
				return false
			}
			lo, _ := jsonwire.Hex4(raw[i+8:])
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

// unquote decodes a short validated JSON string (a method name, a version tag).
func unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// toMessage builds the SDK's message from a validated envelope.
func toMessage(env envelope) (jsonrpc.Message, error) {
	if v, ok := unquote(env.version); !ok || v != "2.0" {
		return nil, fmt.Errorf(`"jsonrpc" must be "2.0"`)
	}
	var id jsonrpc.ID
	if env.id != nil {
		var err error
		if id, err = parseID(env.id); err != nil {
			return nil, err
		}
	}
	if env.method != nil {
		m, ok := unquote(env.method)
		if !ok {
			return nil, fmt.Errorf(`"method" must be a string`)
		}
		req := &jsonrpc.Request{ID: id, Method: m}
		if env.params != nil && string(env.params) != "null" {
			req.Params = json.RawMessage(env.params)
		}
		return req, nil
	}
	if !id.IsValid() {
		return nil, fmt.Errorf(`neither a request ("method") nor a response (an "id")`)
	}
	resp := &jsonrpc.Response{ID: id}
	switch {
	case env.errObj != nil && string(env.errObj) != "null":
		var we jsonrpc.Error
		if err := json.Unmarshal(env.errObj, &we); err != nil {
			return nil, fmt.Errorf(`"error" must be an error object: %w`, err)
		}
		resp.Error = &we
	case env.result != nil:
		resp.Result = json.RawMessage(env.result)
	default:
		return nil, fmt.Errorf(`a response needs "result" or "error"`)
	}
	return resp, nil
}

// appendID appends an SDK id as JSON.
func appendID(dst []byte, id jsonrpc.ID) []byte {
	switch v := id.Raw().(type) {
	case int64:
		return strconv.AppendInt(dst, v, 10)
	case string:
		return appendString(dst, v)
	default:
		return append(dst, "null"...)
	}
}

// appendString appends s as a JSON string as the SDK writes its own messages
// (encoding/json without HTML escaping).
func appendString(dst []byte, s string) []byte { return appendJSONString(dst, s, &jsonSafe) }

// appendHTMLString appends s as a JSON string as json.Marshal writes it, HTML-escaped
// (the SDK encodes content blocks so).
func appendHTMLString(dst []byte, s string) []byte { return appendJSONString(dst, s, &htmlSafe) }

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

// encodeMessage appends msg as one line. Params and results are the SDK's own
// json.Marshal output, so they are copied as they are instead of being re-validated.
func encodeMessage(dst []byte, msg jsonrpc.Message) ([]byte, error) {
	dst = append(dst, `{"jsonrpc":"2.0"`...)
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.ID.IsValid() {
			dst = append(dst, `,"id":`...)
			dst = appendID(dst, m.ID)
		}
		dst = append(dst, `,"method":`...)
		dst = appendString(dst, m.Method)
		if len(m.Params) > 0 {
			dst = append(dst, `,"params":`...)
			dst = append(dst, m.Params...)
		}
	case *jsonrpc.Response:
		dst = append(dst, `,"id":`...)
		dst = appendID(dst, m.ID)
		if m.Error != nil {
			we := wireError(m.Error)
			dst = append(dst, `,"error":{"code":`...)
			dst = strconv.AppendInt(dst, we.Code, 10)
			dst = append(dst, `,"message":`...)
			dst = appendString(dst, we.Message)
			if len(we.Data) > 0 {
				dst = append(dst, `,"data":`...)
				dst = append(dst, we.Data...)
			}
			dst = append(dst, '}')
		} else {
			dst = append(dst, `,"result":`...)
			if len(m.Result) == 0 {
				dst = append(dst, "null"...)
			} else {
				dst = append(dst, m.Result...)
			}
		}
	default:
		return nil, fmt.Errorf("unknown JSON-RPC message type %T", msg)
	}
	return append(dst, '}', '\n'), nil
}

// wireError is the SDK's mapping of a handler error onto the wire: a *jsonrpc.Error as
// it is, otherwise the message of err with the code of a wrapped *jsonrpc.Error.
func wireError(err error) *jsonrpc.Error {
	if we, ok := err.(*jsonrpc.Error); ok {
		return we
	}
	out := &jsonrpc.Error{Message: err.Error()}
	var wrapped *jsonrpc.Error
	if errors.As(err, &wrapped) {
		out.Code = wrapped.Code
	}
	return out
}

// rawErrorReply is a JSON-RPC error answering a request the SDK never sees; id is the
// raw id to echo (nil: null).
func rawErrorReply(id []byte, code int64, message string) []byte {
	dst := []byte(`{"jsonrpc":"2.0","id":`)
	if id == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, id...)
	}
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, code, 10)
	dst = append(dst, `,"message":`...)
	dst = appendString(dst, message)
	return append(dst, '}', '}', '\n')
}
