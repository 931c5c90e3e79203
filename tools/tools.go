// Package tools is the registry of the seven pi tools: their names, descriptions and
// parameter schemas exactly as pi 1.6.0 states them, argument decoding and validation,
// and dispatch to fsops/ and shell/. Every front end (the tool CLI, the in-sandbox
// agent, the host MCP server's tools/list) uses this one table.
package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/pi-sbx/pi-sbx-backend/fsops"
	"github.com/pi-sbx/pi-sbx-backend/result"
)

// ErrUsage marks a call that never reached a tool: unknown name, malformed JSON, or
// arguments that violate the schema. Callers show it as a usage error, not a result.
var ErrUsage = errors.New("invalid tool call")

// Env is what a call may carry besides its arguments.
type Env struct {
	// Extra environment variables for commands (bash), as KEY=VALUE; pi passes PI_* ones.
	Vars []string
	// OnUpdate receives partial results while a call runs (bash output); may be nil.
	OnUpdate func(result.Result)
	// OnProgress receives, at the same throttled moments, the output that arrived since
	// the previous call and the total raw bytes so far (bash); may be nil.
	OnProgress func(text string, totalBytes int)
}

// Tool is one registered tool.
type Tool struct {
	Name        string
	Description string
	Schema      *jsonschema.Schema
	// Prepare rewrites raw arguments before validation (pi's prepareArguments); may be nil.
	Prepare func(map[string]any) (map[string]any, error)
	// Run executes the call; a returned error is a thrown pi error (shown as isError).
	Run func(ctx context.Context, cwd string, args json.RawMessage, env Env) (result.Result, error)

	resolved *jsonschema.Resolved
}

// Registry holds tools by name, and the queue that makes concurrent write and edit calls
// on one file take turns (pi's withFileMutationQueue).
type Registry struct {
	byName map[string]*Tool
	queue  *fsops.MutationQueue
}

// New builds a registry of the given tools, resolving their schemas.
func New(list ...*Tool) (*Registry, error) {
	r := &Registry{byName: make(map[string]*Tool, len(list)), queue: fsops.NewMutationQueue()}
	for _, t := range list {
		res, err := t.Schema.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("resolving schema of %s: %w", t.Name, err)
		}
		t.resolved = res
		r.byName[t.Name] = t
	}
	return r, nil
}

// Default returns the registry of pi's seven tools.
func Default() *Registry {
	r, err := New(Read(), Write(), Edit(), Grep(), Find(), Ls(), Bash())
	if err != nil {
		panic(err) // the built-in schemas are constants; failing here is a programming error
	}
	return r
}

// List returns the tools sorted by name.
func (r *Registry) List() []*Tool {
	out := make([]*Tool, 0, len(r.byName))
	for _, t := range r.byName {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup returns the named tool.
func (r *Registry) Lookup(name string) (*Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// Call decodes and validates raw JSON arguments and runs the named tool in cwd. It returns
// an error wrapping ErrUsage for calls that cannot be made; a tool's own failure is a
// result with IsError set, as pi's agent loop reports it.
func (r *Registry) Call(ctx context.Context, cwd, name string, raw []byte, env Env) (result.Result, error) {
	t, ok := r.byName[name]
	if !ok {
		return result.Result{}, fmt.Errorf("%w: unknown tool %q (have %s)", ErrUsage, name, strings.Join(r.names(), ", "))
	}
	args, err := t.Validate(raw)
	if err != nil {
		return result.Result{}, err
	}
	res, err := t.Run(fsops.WithMutationQueue(ctx, r.queue), cwd, args, env)
	if err != nil {
		return result.Thrown(err), nil
	}
	if res.Content == nil {
		res.Content = []result.Content{}
	}
	return res, nil
}

// Validate parses raw arguments, applies Prepare, checks them against the schema and
// returns the canonical JSON to run with.
func (t *Tool) Validate(raw []byte) (json.RawMessage, error) {
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
		return nil, fmt.Errorf("%w: %s arguments must be a JSON object", ErrUsage, t.Name)
	}
	if t.Prepare != nil {
		var err error
		if obj, err = t.Prepare(obj); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrUsage, t.Name, err)
		}
	}
	// Validate the generic form (json.Number is not understood by the validator).
	canon, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("%w: %s arguments: %v", ErrUsage, t.Name, err)
	}
	var generic any
	if err := json.Unmarshal(canon, &generic); err != nil {
		return nil, fmt.Errorf("%w: %s arguments: %v", ErrUsage, t.Name, err)
	}
	if err := t.resolved.Validate(generic); err != nil {
		// The validator's "validating root: " says nothing; the rest names the field.
		return nil, fmt.Errorf("%w: %s arguments: %s", ErrUsage, t.Name, strings.TrimPrefix(err.Error(), "validating root: "))
	}
	return canon, nil
}

func (r *Registry) names() []string {
	var n []string
	for _, t := range r.List() {
		n = append(n, t.Name)
	}
	return n
}

// object builds a TypeBox-like object schema.
func object(required []string, props map[string]*jsonschema.Schema) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: props, Required: required}
}

func str(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Description: desc}
}
func num(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "number", Description: desc}
}
func boolean(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "boolean", Description: desc}
}

// decode unmarshals validated arguments into a tool's argument struct.
func decode[T any](args json.RawMessage) (T, error) {
	var v T
	err := json.Unmarshal(args, &v)
	return v, err
}
