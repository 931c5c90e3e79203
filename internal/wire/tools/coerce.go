package tools

import (
	"math"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/js"
)

// Coercion as pi 1.6.0 applies it to a model's tool arguments before checking them
// (pi-ai's validateToolArguments: pi-schema's parse with coerce: true), for the schema
// keywords tool schemas here use (type, properties, required, items,
// additionalProperties, anyOf, enum). Three passes, in pi-schema's order:
//  1. a null in an optional property whose schema rejects null is dropped;
//  2. TypeBox's Value.Convert rules: "2" is 2 for a number, 5 is "5" and null "null" for
//     a string, "true" or 1 true for a boolean, "2.5" 2 for an integer, a single value a
//     one-item array; a union takes its first branch whose conversion passes;
//  3. Ajv-style primitive coercion by type, for what pass 2 left.
// A value that cannot be coerced stays as it is, for the check to report.
//
// Values are what encoding/json decodes into any (float64 numbers); every pass copies
// only what it changes and reports whether it changed anything.

func coerceArgs(s *jsonschema.Schema, v any) (any, bool) {
	v1, c1 := dropOptionalNulls(s, v)
	v2, c2 := convert(s, v1)
	v3, c3 := coerceTypes(s, v2)
	return v3, c1 || c2 || c3
}

// propertyNames is s's properties in schema order: PropertyOrder first (pi's order),
// then any others sorted, so that errors come out the same way every time.
func propertyNames(s *jsonschema.Schema) []string {
	names := make([]string, 0, len(s.Properties))
	seen := make(map[string]bool, len(s.Properties))
	for _, n := range s.PropertyOrder {
		if _, ok := s.Properties[n]; ok && !seen[n] {
			names, seen[n] = append(names, n), true
		}
	}
	rest := len(names)
	for n := range s.Properties {
		if !seen[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names[rest:])
	return names
}

// withMember is obj with key set to v, copied on the first change (out tracks the copy).
func withMember(obj map[string]any, out *map[string]any, key string, v any) {
	if *out == nil {
		*out = make(map[string]any, len(obj))
		for k, x := range obj {
			(*out)[k] = x
		}
	}
	(*out)[key] = v
}

// mapItems is items with f applied, copied on the first change.
func mapItems(items []any, f func(i int, v any) (any, bool)) ([]any, bool) {
	var out []any
	for i, it := range items {
		next, changed := f(i, it)
		if !changed {
			continue
		}
		if out == nil {
			out = append([]any(nil), items...)
		}
		out[i] = next
	}
	if out == nil {
		return items, false
	}
	return out, true
}

// mapMembers applies f to each member of obj that s describes (a property, else
// additionalProperties), copied on the first change.
func mapMembers(s *jsonschema.Schema, obj map[string]any, f func(*jsonschema.Schema, any) (any, bool)) (map[string]any, bool) {
	var out map[string]any
	for k, x := range obj {
		ps := s.Properties[k]
		if ps == nil {
			ps = s.AdditionalProperties
		}
		if ps == nil {
			continue
		}
		if next, changed := f(ps, x); changed {
			withMember(obj, &out, k, next)
		}
	}
	if out == nil {
		return obj, false
	}
	return out, true
}

// Pass 1.
func dropOptionalNulls(s *jsonschema.Schema, v any) (any, bool) {
	if s == nil {
		return v, false
	}
	switch x := v.(type) {
	case []any:
		if s.Items == nil {
			return v, false
		}
		return mapItems(x, func(_ int, it any) (any, bool) { return dropOptionalNulls(s.Items, it) })
	case map[string]any:
		var out map[string]any
		for k, ps := range s.Properties {
			val, ok := x[k]
			if !ok {
				continue
			}
			if val == nil && !contains(s.Required, k) && !passes(ps, nil) {
				withMember(x, &out, k, nil)
				delete(out, k)
				continue
			}
			if next, changed := dropOptionalNulls(ps, val); changed {
				withMember(x, &out, k, next)
			}
		}
		if s.AdditionalProperties != nil {
			for k, val := range x {
				if _, named := s.Properties[k]; !named {
					if next, changed := dropOptionalNulls(s.AdditionalProperties, val); changed {
						withMember(x, &out, k, next)
					}
				}
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	}
	return v, false
}

// Pass 2.
func convert(s *jsonschema.Schema, v any) (any, bool) {
	if s == nil {
		return v, false
	}
	if len(s.Enum) > 0 {
		for _, m := range s.Enum {
			if jsEqual(m, v) {
				return v, false
			}
		}
		for _, m := range s.Enum {
			if c, ok := convertLiteral(m, v); ok && passes(s, c) {
				return c, true
			}
		}
		return v, false
	}
	if len(s.AnyOf) > 0 {
		for _, b := range s.AnyOf {
			if passes(b, v) {
				return v, false
			}
		}
		for _, b := range s.AnyOf {
			if c, changed := convert(b, v); changed && passes(s, c) {
				return c, true
			}
		}
		return v, false
	}
	switch s.Type {
	case "string":
		return orValue(tryString(v))(v)
	case "number":
		return orValue(tryNumber(v))(v)
	case "integer":
		if f, ok := tryNumber(v); ok {
			t := math.Trunc(f.(float64))
			return t, !jsEqual(t, v)
		}
		return v, false
	case "boolean":
		return orValue(tryBoolean(v))(v)
	case "null":
		if v == nil {
			return v, false
		}
		if n, ok := tryNull(v); ok {
			return n, true
		}
		return v, false
	case "array":
		if arr, ok := v.([]any); ok {
			if s.Items == nil {
				return v, false
			}
			return mapItems(arr, func(_ int, it any) (any, bool) { return convert(s.Items, it) })
		}
		item, _ := convert(s.Items, v)
		return []any{item}, true
	case "object", "":
		if obj, ok := v.(map[string]any); ok && (s.Type == "object" || s.Properties != nil) {
			return mapMembers(s, obj, convert)
		}
		if s.Type == "" && s.Items != nil {
			return convert(&jsonschema.Schema{Type: "array", Items: s.Items}, v)
		}
	}
	return v, false
}

// orValue turns a try* result into a conversion of v: the result when there is one and
// it differs from v.
func orValue(r any, ok bool) func(v any) (any, bool) {
	return func(v any) (any, bool) {
		if !ok || jsEqual(r, v) {
			return v, false
		}
		return r, true
	}
}

// convertLiteral is an enum value taken from v of another type that converts to exactly it.
func convertLiteral(lit, v any) (any, bool) {
	if jsEqual(lit, v) {
		return v, false
	}
	var r any
	var ok bool
	switch lit.(type) {
	case string:
		r, ok = tryString(v)
	case float64:
		r, ok = tryNumber(v)
	case bool:
		r, ok = tryBoolean(v)
	}
	if ok && jsEqual(r, lit) {
		return r, true
	}
	return v, false
}

func tryString(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case float64:
		return js.String(x), true
	case nil:
		return "null", true
	}
	return nil, false
}

func tryNumber(v any) (any, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1.0, true
		}
		return 0.0, true
	case float64:
		return x, true
	case nil:
		return 0.0, true
	case string:
		if f, ok := jsToNumber(x); ok && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return f, true
		}
		switch strings.ToLower(x) {
		case "false":
			return 0.0, true
		case "true":
			return 1.0, true
		}
		if f, ok := bigIntOfString(x); ok {
			return f, true
		}
	}
	return nil, false
}

var (
	bigIntN       = regexp.MustCompile(`^-?(0|[1-9]\d*)n$`)
	bigIntDecimal = regexp.MustCompile(`^-?(0|[1-9]\d*)\.\d+$`)
)

// bigIntOfString is TypeBox's TryBigInt of a string as tryNumber reaches it ("12n";
// the other forms are numbers already), kept within JavaScript's safe integers.
func bigIntOfString(s string) (float64, bool) {
	var digits string
	switch {
	case bigIntN.MatchString(s):
		digits = s[:len(s)-1]
	case bigIntDecimal.MatchString(s):
		digits, _, _ = strings.Cut(s, ".")
	default:
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	const maxSafe = 1<<53 - 1
	if err != nil || n > maxSafe || n < -maxSafe {
		return 0, false
	}
	return float64(n), true
}

func tryBoolean(v any) (any, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case float64:
		switch x {
		case 0:
			return false, true
		case 1:
			return true, true
		}
	case nil:
		return false, true
	case string:
		if strings.ToLower(x) == "false" || x == "0" {
			return false, true
		}
		if strings.ToLower(x) == "true" || x == "1" {
			return true, true
		}
	}
	return nil, false
}

func tryNull(v any) (any, bool) {
	switch x := v.(type) {
	case nil:
		return nil, true
	case bool:
		return nil, !x
	case float64:
		return nil, x == 0
	case string:
		l := strings.ToLower(x)
		return nil, l == "undefined" || l == "null" || x == "" || x == "0"
	}
	return nil, false
}

// Pass 3.
func coerceTypes(s *jsonschema.Schema, v any) (any, bool) {
	if s == nil {
		return v, false
	}
	next, changed := v, false
	if len(s.AnyOf) > 0 {
		next, changed = coerceUnion(s.AnyOf, next)
	}
	if s.Type != "" {
		if c, ok := coercePrimitive(next, s.Type); ok {
			next, changed = c, true
		}
	}
	switch x := next.(type) {
	case map[string]any:
		if s.Type == "object" {
			if c, ch := mapMembers(s, x, coerceTypes); ch {
				next, changed = c, true
			}
		}
	case []any:
		if s.Type == "array" && s.Items != nil {
			if c, ch := mapItems(x, func(_ int, it any) (any, bool) { return coerceTypes(s.Items, it) }); ch {
				next, changed = c, true
			}
		}
	}
	return next, changed
}

func coerceUnion(branches []*jsonschema.Schema, v any) (any, bool) {
	for _, b := range branches {
		if passes(b, v) {
			return v, false
		}
	}
	for _, b := range branches {
		if c, changed := coerceTypes(b, v); changed && passes(b, c) {
			return c, true
		}
	}
	return v, false
}

// coercePrimitive is Ajv's coerceTypes for one type: the coerced value, or false when
// it leaves v as it is.
func coercePrimitive(v any, typ string) (any, bool) {
	switch typ {
	case "number", "integer":
		switch x := v.(type) {
		case nil:
			return 0.0, true
		case string:
			if jsTrim(x) != "" {
				if f, ok := jsToNumber(x); ok && (typ == "number" && !math.IsInf(f, 0) && !math.IsNaN(f) || typ == "integer" && isInteger(f)) {
					return f, true
				}
			}
		case bool:
			if x {
				return 1.0, true
			}
			return 0.0, true
		}
	case "boolean":
		switch v {
		case nil:
			return false, true
		case "true", 1.0:
			return true, true
		case "false", 0.0:
			return false, true
		}
	case "string":
		switch x := v.(type) {
		case nil:
			return "", true
		case float64:
			return js.String(x), true
		case bool:
			return strconv.FormatBool(x), true
		}
	case "null":
		if v == "" || v == 0.0 || v == false {
			return nil, true
		}
	}
	return v, false
}

func isInteger(f float64) bool { return !math.IsInf(f, 0) && f == math.Trunc(f) }

// jsEqual is JavaScript's === on decoded JSON values (objects and arrays by identity,
// which for these passes means never equal to a different value).
func jsEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any, []any:
		return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer() && reflect.TypeOf(a) == reflect.TypeOf(b)
	default:
		return x == b
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// jsWhitespace is what JavaScript's String.prototype.trim and ToNumber strip.
const jsWhitespace = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"

func jsTrim(s string) string { return strings.Trim(s, jsWhitespace) }

var jsDecimal = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)

// jsToNumber is JavaScript's Number(s): whitespace trimmed, "" is 0, Infinity with a
// sign, 0x/0o/0b integers, decimal literals; false where it is NaN.
func jsToNumber(s string) (float64, bool) {
	t := jsTrim(s)
	switch t {
	case "":
		return 0, true
	case "Infinity", "+Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	}
	if len(t) > 2 && t[0] == '0' {
		base := 0
		switch t[1] {
		case 'x', 'X':
			base = 16
		case 'o', 'O':
			base = 8
		case 'b', 'B':
			base = 2
		}
		if base != 0 {
			var f float64
			for _, c := range t[2:] {
				d, err := strconv.ParseUint(string(c), base, 8)
				if err != nil {
					return 0, false
				}
				f = f*float64(base) + float64(d)
			}
			return f, true
		}
	}
	if !jsDecimal.MatchString(t) {
		return 0, false
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}
