// Package bigarg carries the large string values of a tool call's arguments (a write's
// content, an edit's text, a long command) past every JSON decoder that does not need
// them. The stdio transport, which has already validated the line, sets each such string
// of the tool calls it answers itself aside in a per-connection Store and puts a short
// stand-in string in its place; schema validation and argument preparation then work on
// arguments of a few hundred bytes. Where the value is needed again it comes back from
// the store: spliced as the original JSON literal into the request the host forwards to
// the agent (backend.Client), decoded once (fast, Unescape) into the argument struct a
// tool runs with.
//
// The Store belongs to the connection that read the strings and is handed explicitly to
// the calls it serves (backend.Call), so a value is only ever found by the calls of that
// connection.
package bigarg

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math/bits"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/pi-sbx/pi-sbx-backend/jsonscan"
)

// MinSize is the length of a raw string literal from which it is set aside.
const MinSize = 64 << 10

// KeepKey names a member whose string value is never set aside: edit's "edits" may be a
// JSON-encoded string that argument preparation parses.
const KeepKey = "edits"

// Store holds the literals set aside by one connection.
type Store struct {
	prefix string // the stand-in's Go form up to its number: "\x00pi-sbx-bigarg:NONCE:"
	lit    []byte // the stand-in's JSON form up to its number: `"\u0000pi-sbx-bigarg:NONCE:`
	mu     sync.Mutex
	next   uint64
	vals   map[string][]byte // stand-in → raw JSON literal, quotes included
}

// NewStore returns an empty store whose stand-ins carry a random nonce, so that no
// string a client sends is taken for one.
func NewStore() *Store {
	var n [8]byte
	_, _ = rand.Read(n[:])
	nonce := hex.EncodeToString(n[:])
	return &Store{
		prefix: "\x00pi-sbx-bigarg:" + nonce + ":",
		lit:    []byte(`"\u0000pi-sbx-bigarg:` + nonce + ":"),
		vals:   make(map[string][]byte),
	}
}

// Offload returns the validated JSON value v with every string literal of at least
// MinSize bytes (outside KeepKey members) replaced by a stand-in, and the stand-ins it
// made (for Drop). v is returned as it is when there is nothing to set aside.
func (s *Store) Offload(v []byte) ([]byte, []string) {
	if len(v) < MinSize {
		return v, nil
	}
	var keys []string
	out := make([]byte, 0, 1024)
	out, ok := s.walk(v, out, "", &keys)
	if !ok || len(keys) == 0 {
		s.Drop(keys)
		return v, nil
	}
	return out, keys
}

// walk copies the value at the start of v into out, setting strings aside; it returns
// false on anything unexpected (the caller then keeps the original).
func (s *Store) walk(v, out []byte, key string, keys *[]string) ([]byte, bool) {
	v = jsonscan.TrimSpace(v)
	if len(v) == 0 {
		return out, false
	}
	switch v[0] {
	case '"':
		if len(v) >= MinSize && key != KeepKey {
			return append(out, s.put(v, keys)...), true
		}
		return append(out, v...), true
	case '{', '[':
		return s.walkContainer(v, out, keys)
	default:
		return append(out, v...), true
	}
}

func (s *Store) walkContainer(v, out []byte, keys *[]string) ([]byte, bool) {
	obj := v[0] == '{'
	out = append(out, v[0])
	i := 1
	first := true
	for {
		i = jsonscan.SkipSpace(v, i)
		if i >= len(v) {
			return out, false
		}
		if v[i] == '}' || v[i] == ']' {
			return append(out, v[i]), true
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
			end := jsonscan.StringEnd(v, i)
			if end < 0 {
				return out, false
			}
			key = string(v[i+1 : end-1])
			out = append(out, v[i:end]...)
			out = append(out, ':')
			i = jsonscan.SkipSpace(v, end)
			if i >= len(v) || v[i] != ':' {
				return out, false
			}
			i = jsonscan.SkipSpace(v, i+1)
		}
		end := jsonscan.ValueEnd(v, i)
		if end < 0 {
			return out, false
		}
		var ok bool
		if out, ok = s.walk(v[i:end], out, key, keys); !ok {
			return out, false
		}
		i = end
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
// are copied whole, into one buffer that becomes the string without a copy.
func Unescape(lit []byte) (string, error) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' || !utf8.Valid(lit) {
		return slowUnescape(lit)
	}
	in := lit[1 : len(lit)-1]
	out := make([]byte, len(in)) // an escape never decodes longer than it is written
	w := 0
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
			return slowUnescape(lit)
		}
		switch c := in[r+1]; c {
		case '"', '\\', '/':
			out[w] = c
		case 'b':
			out[w] = '\b'
		case 'f':
			out[w] = '\f'
		case 'n':
			out[w] = '\n'
		case 'r':
			out[w] = '\r'
		case 't':
			out[w] = '\t'
		case 'u':
			ru, ok := jsonscan.Hex4(in[r+2:])
			if !ok {
				return slowUnescape(lit)
			}
			r += 6
			if utf16.IsSurrogate(ru) {
				r2, ok2 := rune(0), false
				if r+6 <= len(in) && in[r] == '\\' && in[r+1] == 'u' {
					r2, ok2 = jsonscan.Hex4(in[r+2:])
				}
				if dec := utf16.DecodeRune(ru, r2); ok2 && dec != utf8.RuneError {
					ru = dec
					r += 6
				} else {
					ru = utf8.RuneError
				}
			}
			w += utf8.EncodeRune(out[w:], ru)
			continue
		default:
			return slowUnescape(lit)
		}
		w++
		r += 2
	}
	// out is never written again: it becomes the string as it is (a 30 MB write's
	// content is then held once, not twice).
	return unsafe.String(unsafe.SliceData(out), w), nil
}

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
