package tools

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"
)

// argError is one violation as pi-schema reports it: where (a dotted path, "root" for
// the arguments themselves) and what.
type argError struct {
	path, msg string
}

// checkArgs lists what v violates of s, in schema order (properties in their declared
// order, then members left to additionalProperties sorted by name, array items in
// order), worded as pi-schema words it: "expected number, got string", "missing",
// `expected one of ["a","b"]`. It covers the keywords coerceArgs does.
func checkArgs(s *jsonschema.Schema, v any, path string, errs []argError) []argError {
	if s == nil {
		return errs
	}
	at := func(key string) string {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	here := path
	if here == "" {
		here = "root"
	}
	if len(s.AnyOf) > 0 {
		for _, b := range s.AnyOf {
			if passes(b, v) {
				return errs
			}
		}
		// pi reports the first branch's complaint.
		return checkArgs(s.AnyOf[0], v, path, errs)
	}
	if len(s.Enum) > 0 {
		for _, m := range s.Enum {
			if jsEqual(m, v) {
				return errs
			}
		}
		list, _ := json.Marshal(s.Enum)
		return append(errs, argError{here, "expected one of " + string(list)})
	}
	if s.Type != "" && !hasType(v, s.Type) {
		return append(errs, argError{here, "expected " + s.Type + ", got " + typeName(v)})
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range propertyNames(s) {
			val, ok := x[k]
			if !ok {
				if contains(s.Required, k) {
					errs = append(errs, argError{at(k), "missing"})
				}
				continue
			}
			errs = checkArgs(s.Properties[k], val, at(k), errs)
		}
		for _, k := range s.Required {
			if _, declared := s.Properties[k]; !declared {
				if _, ok := x[k]; !ok {
					errs = append(errs, argError{at(k), "missing"})
				}
			}
		}
		if s.AdditionalProperties != nil {
			var extra []string
			for k := range x {
				if _, declared := s.Properties[k]; !declared {
					extra = append(extra, k)
				}
			}
			sort.Strings(extra)
			for _, k := range extra {
				errs = checkArgs(s.AdditionalProperties, x[k], at(k), errs)
			}
		}
	case []any:
		for i, it := range x {
			errs = checkArgs(s.Items, it, at(strconv.Itoa(i)), errs)
		}
	}
	return errs
}

// passes reports whether v satisfies s.
func passes(s *jsonschema.Schema, v any) bool { return len(checkArgs(s, v, "", nil)) == 0 }

func hasType(v any, typ string) bool {
	switch typ {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		f, ok := v.(float64)
		return ok && !math.IsInf(f, 0) && !math.IsNaN(f)
	case "integer":
		f, ok := v.(float64)
		return ok && isInteger(f)
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	}
	return true
}

// typeName is pi-schema's name for v's type: a whole number is an integer.
func typeName(v any) string {
	switch x := v.(type) {
	case string:
		return "string"
	case float64:
		if isInteger(x) {
			return "integer"
		}
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}
