// Package tools describes tools: their names, descriptions and parameter schemas (pi
// 1.6.0's, word for word, for pi's seven), and the argument rules a caller checks before
// a call goes anywhere (decoding, pi's argument repair, pi's coercion and schema check
// with pi's messages). It is plain
// data that the host links; the implementations of pi's seven live in vmagent, which
// only the in-sandbox agent and `tool --local` link.
package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
)

// ErrUsage marks a call that never reached a tool: unknown name, malformed JSON, or
// arguments that violate the schema. Callers show it as a usage error, not a result.
var ErrUsage = errors.New("invalid tool call")

// UsageError is an ErrUsage worded as msg: the message of a usage error that crossed a
// process boundary (the agent's invalid-params answer), which already names the problem.
func UsageError(msg string) error { return usageError(msg) }

type usageError string

func (e usageError) Error() string      { return string(e) }
func (usageError) Is(target error) bool { return target == ErrUsage }

// Env is what a call may carry besides its arguments.
type Env struct {
	// Extra environment variables for commands (bash), as KEY=VALUE; pi passes PI_* ones.
	Vars []string
	// OnUpdate receives partial results while a call runs (bash output); may be nil.
	OnUpdate func(result.Result)
	// OnProgress receives, at the same throttled moments, the output that arrived since
	// the previous call and the total raw bytes so far (bash); may be nil.
	OnProgress func(text string, totalBytes int)
	// Decode decodes the call's validated arguments into v, where the transport that
	// read them has its own way (large strings it set aside); nil: encoding/json.
	Decode func(args []byte, v any) error
}

// Tool describes one tool. Build it as a literal; its schema is resolved on first use.
type Tool struct {
	Name        string
	Description string
	Schema      *jsonschema.Schema
	// Prepare rewrites raw arguments before validation (pi's prepareArguments); may be nil.
	Prepare func(map[string]any) (map[string]any, error)
	// Parsed names the argument members whose string values Prepare parses (edit's
	// edits may come as a JSON-encoded array): a transport passes them on whole.
	Parsed []string

	once     sync.Once
	resolved *jsonschema.Resolved
	err      error
}

// Resolve checks the schema once; Validate calls it, and registries call it up front so
// that a broken schema fails at startup rather than at the first call.
func (t *Tool) Resolve() error {
	t.once.Do(func() {
		if t.Schema == nil {
			t.err = fmt.Errorf("tool %s has no schema", t.Name)
			return
		}
		t.resolved, t.err = t.Schema.Resolve(nil)
		if t.err != nil {
			t.err = fmt.Errorf("resolving schema of %s: %w", t.Name, t.err)
		}
	})
	return t.err
}

// Validate parses raw arguments, applies Prepare, checks them against the schema and
// returns the JSON to run with: raw itself when Prepare changed nothing, else the
// prepared arguments. Errors wrap ErrUsage.
func (t *Tool) Validate(raw []byte) (json.RawMessage, error) {
	if err := t.Resolve(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	// One decode, as the validator wants it (float64 numbers), serves the common case;
	// anything it does not take (not an object, trailing data, a number beyond float64)
	// goes the long way, which words the error.
	var generic any
	if json.Unmarshal(raw, &generic) == nil {
		if obj, ok := generic.(map[string]any); ok {
			return t.validateObject(raw, obj)
		}
	}
	return t.validateSlowly(raw)
}

// validateObject is Validate for arguments decoded into obj: Prepare, then pi's
// coercion, then the check, whose failure is worded as pi words it (see invalid).
func (t *Tool) validateObject(raw []byte, obj map[string]any) (json.RawMessage, error) {
	out := json.RawMessage(raw)
	if t.Prepare != nil {
		var err error
		if obj, err = t.Prepare(obj); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrUsage, t.Name, err)
		}
		if out, err = json.Marshal(obj); err != nil {
			return nil, fmt.Errorf("%w: %s arguments: %v", ErrUsage, t.Name, err)
		}
	}
	coerced, changed := coerceArgs(t.Schema, obj)
	if errs := checkArgs(t.Schema, coerced, "", nil); len(errs) > 0 {
		return nil, t.invalid(errs, received(raw, obj))
	}
	if changed {
		var err error
		if out, err = marshalPlain(coerced); err != nil {
			return nil, fmt.Errorf("%w: %s arguments: %v", ErrUsage, t.Name, err)
		}
	}
	// The schema validator stays as a guard for keywords checkArgs does not know.
	if err := t.resolved.Validate(coerced); err != nil {
		// The validator's "validating root: " says nothing; the rest names the field.
		return nil, fmt.Errorf("%w: %s arguments: %s", ErrUsage, t.Name, strings.TrimPrefix(err.Error(), "validating root: "))
	}
	return out, nil
}

// invalid is pi's validation failure (pi-ai's validateToolArguments): every violation
// in schema order, then the arguments received (after Prepare, as pi's are) indented as
// JSON.stringify(args, null, 2) does, members in the order they came.
func (t *Tool) invalid(errs []argError, received []byte) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Validation failed for tool %q:\n", t.Name)
	for _, e := range errs {
		fmt.Fprintf(&b, "  - %s: %s\n", e.path, e.msg)
	}
	var indented bytes.Buffer
	if json.Indent(&indented, received, "", "  ") != nil {
		indented.Reset()
		indented.Write(received)
	}
	fmt.Fprintf(&b, "\nReceived arguments:\n%s", indented.Bytes())
	return usageError(b.String())
}

// received is the prepared arguments obj as pi's message shows them: raw itself when
// Prepare left them as they were, else obj's members in raw's order (then new ones).
func received(raw []byte, obj map[string]any) []byte {
	var orig map[string]any
	if json.Unmarshal(raw, &orig) == nil && reflect.DeepEqual(orig, obj) {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var order []string
	if tok, err := dec.Token(); err == nil && tok == json.Delim('{') {
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				break
			}
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				break
			}
			order = append(order, key.(string))
		}
	}
	var rest []string
	for k := range obj {
		if !contains(order, k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	for _, k := range append(order, rest...) {
		v, ok := obj[k]
		if !ok {
			continue
		}
		if n++; n > 1 {
			b.WriteByte(',')
		}
		kj, _ := marshalPlain(k)
		vj, err := marshalPlain(v)
		if err != nil {
			return raw
		}
		b.Write(kj)
		b.WriteByte(':')
		b.Write(vj)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// marshalPlain is json.Marshal without HTML escaping (JSON.stringify's spelling).
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// validateSlowly decodes with exact numbers, so that what the fast decode refused gets
// its precise error: not JSON, trailing data, not an object, or a number beyond float64.
func (t *Tool) validateSlowly(raw []byte) (json.RawMessage, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %s arguments are not valid JSON: %v", ErrUsage, t.Name, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: %s arguments: trailing data after the JSON object", ErrUsage, t.Name)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, t.invalid([]argError{{"root", "expected object, got " + typeName(jsonValue(v))}}, raw)
	}
	// The object itself decodes only with exact numbers; the validator's form (float64)
	// says which number does not fit.
	canon, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("%w: %s arguments: %v", ErrUsage, t.Name, err)
	}
	var generic map[string]any
	if err := json.Unmarshal(canon, &generic); err != nil {
		return nil, fmt.Errorf("%w: %s arguments: %v", ErrUsage, t.Name, err)
	}
	return t.validateObject(canon, generic)
}

// Lookup returns the tool of list with the given name, or an ErrUsage naming the tools
// there are.
func Lookup(list []*Tool, name string) (*Tool, error) {
	for _, t := range list {
		if t.Name == name {
			return t, nil
		}
	}
	return nil, fmt.Errorf("%w: unknown tool %q (have %s)", ErrUsage, name, strings.Join(Names(list), ", "))
}

// Names returns the names of list, sorted.
func Names(list []*Tool) []string {
	n := make([]string, 0, len(list))
	for _, t := range list {
		n = append(n, t.Name)
	}
	sort.Strings(n)
	return n
}

// Object builds a TypeBox-like object schema (what pi's tools declare).
func Object(required []string, props map[string]*jsonschema.Schema) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: props, Required: required}
}

// String, Number, Boolean and Integer build described leaf schemas.
func String(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Description: desc}
}

// Number is a described number schema.
func Number(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "number", Description: desc}
}

// Boolean is a described boolean schema.
func Boolean(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "boolean", Description: desc}
}

// Integer is a described integer schema.
func Integer(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "integer", Description: desc}
}

// object, str, num and boolean keep pi's seven definitions short.
var (
	object  = Object
	str     = String
	num     = Number
	boolean = Boolean
)

// jsonValue is v decoded with UseNumber as encoding/json decodes it by default.
func jsonValue(v any) any {
	if n, ok := v.(json.Number); ok {
		f, _ := n.Float64()
		return f
	}
	return v
}
