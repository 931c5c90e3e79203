// Stand-ins carry the large string values of a tool call's arguments (a write's
// content, an edit's text, a long command) past every JSON decoder that does not need
// them. The stdio transport, which has already validated the line, sets each such string
// of the tool calls it answers itself aside in a per-connection Store and puts a short
// stand-in string in its place; schema validation and argument preparation then work on
// arguments of a few hundred bytes. Where the value is needed again it comes back from
// the store: spliced as the original JSON literal into the request the host forwards to
// the agent (agentlink.Client), decoded once (fast, Unescape) into the argument struct a
// tool runs with.
//
// The Store belongs to the connection that read the strings and is handed explicitly to
// the calls it serves (mcpserver.Call), so a value is only ever found by the calls of that
// connection.

package jsonwire

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math/bits"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// MinSize is the length of a raw string literal from which it is set aside. It is low:
// decoding even a 2 KB write's content with encoding/json (which checks it again, then
// unquotes it) cost both ends more than the rest of the call.
const MinSize = 1 << 10

// Store holds the literals set aside by one connection.
type Store struct {
	prefix string // the stand-in's Go form up to its number: "\x00pi-sbx-bigarg:NONCE:"
	lit    []byte // the stand-in's JSON form up to its number: `"\u0000pi-sbx-bigarg:NONCE:`
	mu     sync.Mutex
	next   uint64
	vals   map[string][]byte // stand-in → raw JSON literal, quotes included
	keep   []string          // member names whose string values stay in place
}

// NewStore returns an empty store whose stand-ins carry a random nonce, so that no
// string a client sends is taken for one. The string value of a member named in keep
// is never set aside (one that argument preparation parses, such as a JSON-encoded
// array).
func NewStore(keep ...string) *Store {
	var n [8]byte
	_, _ = rand.Read(n[:])
	nonce := hex.EncodeToString(n[:])
	return &Store{
		prefix: "\x00pi-sbx-bigarg:" + nonce + ":",
		lit:    []byte(`"\u0000pi-sbx-bigarg:` + nonce + ":"),
		vals:   make(map[string][]byte),
		keep:   keep,
	}
}

// Offload returns the validated JSON value v with every string literal of at least
// MinSize bytes (outside the members the store keeps) replaced by a stand-in, and the stand-ins it
// made (for Drop). v is returned as it is when there is nothing to set aside.
func (s *Store) Offload(v []byte) ([]byte, []string) {
	if len(v) < MinSize {
		return v, nil
	}
	var keys []string
	out := make([]byte, 0, 1024)
	out, end, ok := s.walk(v, 0, out, "", &keys)
	if !ok || len(keys) == 0 || SkipSpace(v, end) != len(v) {
		s.Drop(keys)
		return v, nil
	}
	return out, keys
}

// walk copies the value at v[i] into out, setting strings aside, and returns the index
// after it, having looked at each byte once, whatever the nesting; ok is false on
// anything unexpected (the caller then keeps the original).
func (s *Store) walk(v []byte, i int, out []byte, key string, keys *[]string) ([]byte, int, bool) {
	i = SkipSpace(v, i)
	if i >= len(v) {
		return out, i, false
	}
	var end int
	switch v[i] {
	case '{', '[':
		return s.walkContainer(v, i, out, keys)
	case '"':
		if end = StringEnd(v, i); end >= 0 && end-i >= MinSize && !slices.Contains(s.keep, key) {
			return append(out, s.put(v[i:end], keys)...), end, true
		}
	default:
		end = ValueEnd(v, i)
	}
	if end < 0 {
		return out, i, false
	}
	return append(out, v[i:end]...), end, true
}

func (s *Store) walkContainer(v []byte, i int, out []byte, keys *[]string) ([]byte, int, bool) {
	obj := v[i] == '{'
	out = append(out, v[i])
	i++
	first := true
	for {
		i = SkipSpace(v, i)
		if i >= len(v) {
			return out, i, false
		}
		if v[i] == '}' || v[i] == ']' {
			return append(out, v[i]), i + 1, true
		}
		if v[i] == ',' {
			i++
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		key := ""
		if obj {
			end := StringEnd(v, i)
			if end < 0 {
				return out, i, false
			}
			key = string(v[i+1 : end-1])
			out = append(out, v[i:end]...)
			out = append(out, ':')
			i = SkipSpace(v, end)
			if i >= len(v) || v[i] != ':' {
				return out, i, false
			}
			i++
		}
		var ok bool
		if out, i, ok = s.walk(v, i, out, key, keys); !ok {
			return out, i, false
		}
	}
}

func (s *Store) put(lit []byte, keys *[]string) string {
	s.mu.Lock()
	s.next++
	n := strconv.FormatUint(s.next, 10)
	standIn := s.prefix + n
	s.vals[standIn] = lit
	s.mu.Unlock()
	*keys = append(*keys, standIn)
	return string(s.lit) + n + `"`
}

// Drop forgets stand-ins (once their call is answered).
func (s *Store) Drop(keys []string) {
	if len(keys) == 0 {
		return
	}
	s.mu.Lock()
	for _, k := range keys {
		delete(s.vals, k)
	}
	s.mu.Unlock()
}

// Count is the number of stand-ins of this store in data.
func (s *Store) Count(data []byte) int {
	return bytes.Count(data, s.lit)
}

// Len is the number of literals held.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.vals)
}

// Splice returns data (JSON, as encoding/json writes it) with every stand-in literal
// replaced by the literal it stands for; data itself when it holds none. A nil store
// splices nothing.
func (s *Store) Splice(data []byte) []byte {
	if s == nil || !bytes.Contains(data, s.lit) {
		return data
	}
	return s.AppendSplice(nil, data)
}

// AppendSplice appends Splice(data) to out.
func (s *Store) AppendSplice(out, data []byte) []byte {
	if s == nil || !bytes.Contains(data, s.lit) {
		return append(out, data...)
	}
	rest := data
	for {
		i := bytes.Index(rest, s.lit)
		if i < 0 {
			return append(out, rest...)
		}
		j := i + len(s.lit)
		k := j
		for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' {
			k++
		}
		if k >= len(rest) || rest[k] != '"' {
			out = append(out, rest[:j]...)
			rest = rest[j:]
			continue
		}
		s.mu.Lock()
		lit, ok := s.vals[s.prefix+string(rest[j:k])]
		s.mu.Unlock()
		if ok && cap(out)-len(out) < len(rest)+len(lit) {
			out = append(make([]byte, 0, len(out)+len(rest)+len(lit)), out...)
		}
		out = append(out, rest[:i]...)
		if ok {
			out = append(out, lit...)
		} else {
			out = append(out, rest[i:k+1]...)
		}
		rest = rest[k+1:]
	}
}

// Segments returns the pieces of Splice(data) without joining them: the parts of data
// between stand-ins, and the literals themselves (slices of the lines they were read
// from), so a writer can send a large request without building it.
func (s *Store) Segments(data []byte) [][]byte {
	if s == nil || !bytes.Contains(data, s.lit) {
		return [][]byte{data}
	}
	var out [][]byte
	rest := data
	for {
		i := bytes.Index(rest, s.lit)
		if i < 0 {
			return append(out, rest)
		}
		j := i + len(s.lit)
		k := j
		for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' {
			k++
		}
		if k >= len(rest) || rest[k] != '"' {
			out = append(out, rest[:j])
			rest = rest[j:]
			continue
		}
		s.mu.Lock()
		lit, ok := s.vals[s.prefix+string(rest[j:k])]
		s.mu.Unlock()
		if ok {
			out = append(out, rest[:i], lit)
		} else {
			out = append(out, rest[:k+1])
		}
		rest = rest[k+1:]
	}
}

// Resolve replaces, in the string fields of the struct (or slice, pointer) *v points to,
// every stand-in of s by its decoded value. A nil store resolves nothing.
func (s *Store) Resolve(v any) error {
	if s == nil {
		return nil
	}
	return s.resolve(reflect.ValueOf(v))
}

func (s *Store) resolve(v reflect.Value) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		if v.Kind() == reflect.Interface {
			inner := v.Elem()
			if inner.Kind() == reflect.String && v.CanSet() {
				str, err := s.value(inner.String())
				if err != nil {
					return err
				}
				v.Set(reflect.ValueOf(str))
				return nil
			}
			if inner.Kind() == reflect.Map || inner.Kind() == reflect.Slice || inner.Kind() == reflect.Pointer {
				return s.resolve(inner)
			}
			return nil
		}
		return s.resolve(v.Elem())
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if f := v.Field(i); f.CanSet() {
				if err := s.resolve(f); err != nil {
					return err
				}
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if err := s.resolve(v.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := v.MapIndex(k)
			if e.Kind() == reflect.Interface && !e.IsNil() {
				e = e.Elem()
			}
			switch e.Kind() {
			case reflect.String:
				str, err := s.value(e.String())
				if err != nil {
					return err
				}
				v.SetMapIndex(k, reflect.ValueOf(str).Convert(v.Type().Elem()))
			case reflect.Map, reflect.Slice, reflect.Pointer:
				if err := s.resolve(e); err != nil {
					return err
				}
			}
		}
	case reflect.String:
		if v.CanSet() {
			str, err := s.value(v.String())
			if err != nil {
				return err
			}
			v.SetString(str)
		}
	}
	return nil
}

// Value is the string a stand-in of this store stands for, or str itself when it is
// none (a nil store has none): for a reader of arguments given with stand-ins that
// wants a value, not the whole arguments spliced.
func (s *Store) Value(str string) string {
	if s == nil {
		return str
	}
	v, err := s.value(str)
	if err != nil {
		return str
	}
	return v
}

// value is the decoded string a stand-in stands for, or str itself.
func (s *Store) value(str string) (string, error) {
	if !strings.HasPrefix(str, s.prefix) {
		return str, nil
	}
	s.mu.Lock()
	lit, ok := s.vals[str]
	s.mu.Unlock()
	if !ok {
		return str, nil
	}
	return Unescape(lit)
}

// Unescape decodes a valid JSON string literal (quotes included) exactly as
// encoding/json does, an order of magnitude faster on long text: runs without escapes
// are copied whole, into one buffer that becomes the string without a copy, and a long
// literal is decoded in two halves at once.
func Unescape(lit []byte) (string, error) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' || !utf8.Valid(lit) {
		return slowUnescape(lit)
	}
	in := lit[1 : len(lit)-1]
	out := make([]byte, len(in)) // an escape never decodes longer than it is written
	var w int
	ok := false
	cut := -1
	if len(in) >= splitMin {
		cut = Cut(lit, 1+len(in)/2, len(lit)-1) - 1
	}
	if cut > 0 {
		// Each half decodes into its own part of out (neither writes past its input's
		// length); the second then moves down to where the first ended.
		var w2 int
		ok2 := make(chan bool, 1)
		go func() {
			var ok bool
			w2, ok = unescapeInto(out[cut:], in[cut:])
			ok2 <- ok
		}()
		w, ok = unescapeInto(out, in[:cut])
		if <-ok2 && ok {
			w += copy(out[w:], out[cut:cut+w2])
		} else {
			ok = false
		}
	} else {
		w, ok = unescapeInto(out, in)
	}
	if !ok {
		return slowUnescape(lit)
	}
	// out is never written again: it becomes the string as it is (a 30 MB write's
	// content is then held once, not twice).
	return unsafe.String(unsafe.SliceData(out), w), nil
}

// splitMin is the length from which Unescape decodes a literal in two halves at once: a
// large write's content, for which the call waits, while a core is free.
const splitMin = 1 << 20

// unescapeInto decodes the content of a valid literal, cut where Cut allows,
// into out (at least len(in) long) and returns its length; ok is false for what only
// encoding/json decodes (an invalid escape, a backslash at the end).
func unescapeInto(out, in []byte) (w int, ok bool) {
	for r := 0; r < len(in); {
		// Copy up to the next backslash eight bytes at a time (source text has an escape
		// every few bytes: no call per run). An escape never decodes longer than it is
		// written, so w <= r and eight bytes always fit at out[w:].
		if r+8 <= len(in) {
			x := binary.LittleEndian.Uint64(in[r:])
			binary.LittleEndian.PutUint64(out[w:], x)
			m := backslashes(x)
			if m == 0 {
				r, w = r+8, w+8
				continue
			}
			k := bits.TrailingZeros64(m) / 8
			r, w = r+k, w+k
		} else {
			for r < len(in) && in[r] != '\\' {
				out[w] = in[r]
				r, w = r+1, w+1
			}
			if r >= len(in) {
				break
			}
		}
		if r+1 >= len(in) {
			return 0, false
		}
		// A one-byte escape is a table lookup: no branch on its kind, which source text
		// mixes too irregularly (\n, \t, \") for a predictor.
		if d := unescaped[in[r+1]]; d != 0 {
			out[w] = d
			r, w = r+2, w+1
			// Escapes come in runs (a line feed, then the next line's tabs): no search
			// for the next backslash when it is the next byte.
			for r+1 < len(in) && in[r] == '\\' {
				d := unescaped[in[r+1]]
				if d == 0 {
					break
				}
				out[w] = d
				r, w = r+2, w+1
			}
			continue
		}
		if in[r+1] != 'u' {
			return 0, false
		}
		ru, ok := Hex4(in[r+2:])
		if !ok {
			return 0, false
		}
		r += 6
		if utf16.IsSurrogate(ru) {
			r2, ok2 := rune(0), false
			if r+6 <= len(in) && in[r] == '\\' && in[r+1] == 'u' {
				r2, ok2 = Hex4(in[r+2:])
			}
			if dec := utf16.DecodeRune(ru, r2); ok2 && dec != utf8.RuneError {
				ru = dec
				r += 6
			} else {
				ru = utf8.RuneError
			}
		}
		w += utf8.EncodeRune(out[w:], ru)
	}
	return w, true
}

// unescaped is the byte a one-byte escape (a backslash and the index) stands for, 0 if
// the index begins no such escape.
var unescaped = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// backslashes has the high bit set in the lowest byte of x that is a backslash, if any
// (bits above it may be set too).
func backslashes(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	v := x ^ (ones * '\\')
	return (v - ones) &^ v & highs
}

func slowUnescape(lit []byte) (string, error) {
	var s string
	err := json.Unmarshal(lit, &s)
	return s, err
}
