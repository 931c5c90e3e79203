// Package vmagent runs tools in this process: the implementations of pi's seven tools
// (fsops/ and shell/) and of the terminal tools (terminal/) behind their descriptions in
// tools/. Only what runs next to the
// files links it: the agent inside the VM and `tool --local`. The host never does.
package vmagent

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops"
	"github.com/pi-sbx/pi-sbx-backend/internal/vm/shell"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// Func runs one call whose arguments the tool's description has validated; a returned
// error is a thrown pi error (shown as isError).
type Func func(ctx context.Context, cwd string, args json.RawMessage, env tools.Env) (result.Result, error)

// Impl is a tool description with its implementation.
type Impl struct {
	Tool *tools.Tool
	Run  Func
	// Unlisted tools are callable but not offered in tools/list (a serve method such as
	// pi's `!` commands, which the model must not see).
	Unlisted bool
}

// Registry holds implementations by name.
type Registry struct {
	byName map[string]Impl
}

// New builds a registry of the given implementations, resolving their schemas.
func New(impls ...Impl) (*Registry, error) {
	r := &Registry{byName: make(map[string]Impl, len(impls))}
	for _, im := range impls {
		if im.Tool == nil || im.Run == nil {
			return nil, fmt.Errorf("incomplete tool implementation %+v", im)
		}
		if err := im.Tool.Resolve(); err != nil {
			return nil, err
		}
		if _, dup := r.byName[im.Tool.Name]; dup {
			return nil, fmt.Errorf("tool %s registered twice", im.Tool.Name)
		}
		r.byName[im.Tool.Name] = im
	}
	return r, nil
}

// Default returns a registry of pi's seven tools, the unlisted pi_sbx_pty_exec and
// pi_sbx_pty_resize, and the terminal tools (unlisted: serve offers them). Its
// write and edit share one mutation queue (pi's withFileMutationQueue), so one registry
// must serve every call of a session.
func Default() *Registry { return WithTerminals(Terminal(DefaultTerminals())) }

// WithTerminals is Default with the given implementations of the terminal tools (the
// terminal server's client, for a process that does not outlive its call).
func WithTerminals(terminal []Impl) *Registry {
	impls := append(append(Pi(fsops.NewMutationQueue()), Pty()...), Journal())
	r, err := New(append(impls, terminal...)...)
	if err != nil {
		panic(err) // the built-in schemas are constants; failing here is a programming error
	}
	return r
}

// Pi returns the implementations of pi's seven tools; concurrent writes and edits of one
// file take turns through q.
func Pi(q *fsops.MutationQueue) []Impl {
	return []Impl{
		{Tool: tools.Read(), Run: run(fsops.Read)},
		{Tool: tools.Write(), Run: run(func(ctx context.Context, cwd string, a fsops.WriteArgs) (result.Result, error) {
			return fsops.Write(ctx, cwd, a, q)
		})},
		{Tool: tools.Edit(), Run: run(func(ctx context.Context, cwd string, a fsops.EditArgs) (result.Result, error) {
			return fsops.Edit(ctx, cwd, a, q)
		})},
		{Tool: tools.Grep(), Run: run(fsops.Grep)},
		{Tool: tools.Find(), Run: run(fsops.Find)},
		{Tool: tools.Ls(), Run: run(fsops.Ls)},
		{Tool: tools.Bash(), Run: bash},
	}
}

// Impls returns the registry's implementations sorted by name.
func (r *Registry) Impls() []Impl {
	out := make([]Impl, 0, len(r.byName))
	for _, im := range r.byName {
		out = append(out, im)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tool.Name < out[j].Tool.Name })
	return out
}

// Tools returns the descriptions of the registry's tools, sorted by name.
func (r *Registry) Tools() []*tools.Tool {
	var out []*tools.Tool
	for _, im := range r.Impls() {
		out = append(out, im.Tool)
	}
	return out
}

// Call validates raw JSON arguments and runs the named tool in cwd. It returns an error
// wrapping tools.ErrUsage for calls that cannot be made; a tool's own failure is a
// result with IsError set, as pi's agent loop reports it.
func (r *Registry) Call(ctx context.Context, cwd, name string, raw []byte, env tools.Env) (result.Result, error) {
	im, err := r.lookup(name)
	if err != nil {
		return result.Result{}, err
	}
	args, err := im.Tool.Validate(raw)
	if err != nil {
		return result.Result{}, err
	}
	return im.run(ctx, cwd, args, env)
}

// Run is Call for arguments already validated against the tool's description (by the
// MCP server's route): they are not validated twice.
func (r *Registry) Run(ctx context.Context, cwd, name string, args []byte, env tools.Env) (result.Result, error) {
	im, err := r.lookup(name)
	if err != nil {
		return result.Result{}, err
	}
	return im.run(ctx, cwd, args, env)
}

func (r *Registry) lookup(name string) (Impl, error) {
	im, ok := r.byName[name]
	if !ok {
		var listed []*tools.Tool // the error names the tools a user is offered
		for _, im := range r.Impls() {
			if !im.Unlisted {
				listed = append(listed, im.Tool)
			}
		}
		_, err := tools.Lookup(listed, name)
		return Impl{}, err
	}
	return im, nil
}

func (im Impl) run(ctx context.Context, cwd string, args []byte, env tools.Env) (result.Result, error) {
	res, err := im.Run(ctx, cwd, args, env)
	if err != nil {
		return result.Thrown(err), nil
	}
	if res.Content == nil {
		res.Content = []result.Content{}
	}
	return res, nil
}

func bash(ctx context.Context, cwd string, raw json.RawMessage, env tools.Env) (result.Result, error) {
	args, err := decode[shell.BashArgs](raw, env)
	if err != nil {
		return result.Result{}, err
	}
	opts := shell.BashOptions{Env: env.Vars, OnUpdate: env.OnUpdate}
	if env.OnProgress != nil {
		opts.OnProgress = func(p shell.Progress) { env.OnProgress(p.Text, p.Bytes) }
	}
	return shell.Bash(ctx, cwd, args, opts)
}

// run adapts a plain fsops function to Func.
func run[A any](f func(context.Context, string, A) (result.Result, error)) Func {
	return func(ctx context.Context, cwd string, raw json.RawMessage, env tools.Env) (result.Result, error) {
		args, err := decode[A](raw, env)
		if err != nil {
			return result.Result{}, err
		}
		return f(ctx, cwd, args)
	}
}

// decode unmarshals validated arguments into a tool's argument struct, the transport's
// way if it has one (env.Decode).
func decode[T any](args json.RawMessage, env tools.Env) (T, error) {
	var v T
	if env.Decode != nil {
		return v, env.Decode(args, &v)
	}
	return v, json.Unmarshal(args, &v)
}
