// Package sbx is the only door to the sandbox: it runs the Docker Sandboxes CLI (`sbx`)
// with a scrubbed environment and a timeout on every call, checks sandbox names, parses
// `sbx ls --json` defensively and classifies failures (missing sandbox, runtime that
// never started, timeout, exit status). It also runs the few processes that run sbx on
// its behalf: the teardown watchdog (a detached shell) and exec sessions.
//
// It is only the door: a session's sandbox lifecycle (Session, leases, owner records,
// keep-alive, GC) is internal/host/lifecycle's, built on Client. No other package starts
// sbx, and nothing here talks to a Docker daemon.
package sbx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Defaults for Client.
const (
	DefaultTimeout       = 2 * time.Minute
	DefaultCreateTimeout = 10 * time.Minute
	// DefaultMaxOutput caps what one call may print to a captured stdout.
	DefaultMaxOutput = 64 << 20
	maxLsOutput      = 8 << 20
	maxStderr        = 16 << 10
)

// Client runs sbx commands. The zero value is not usable; fill Bin, Runner and Env.
type Client struct {
	Bin    string   // path of the sbx program (PI_SBX_BIN, default "sbx")
	Runner Runner   // how processes are started
	Env    []string // environment of every sbx child, already scrubbed (EnvPolicy.HostEnv)
	// Timeout bounds each call that does not set its own (DefaultTimeout when zero).
	Timeout time.Duration
	// RetryDelays are the waits before retrying a call whose sandbox runtime failed to
	// start (the command provably never ran); nil means 250ms then 1s.
	RetryDelays []time.Duration
	// Missing, when set, is why the sbx program was not found (FindBin): a call that
	// cannot start it says so, naming what was searched.
	Missing error
	// Cloud puts the global --cloud on every call: the sandboxes this client reaches are
	// in Docker's cloud (see InCloud).
	Cloud bool
	// ProbeAfter and ProbeTimeout: a call still running after ProbeAfter is joined by a
	// `sbx version` that must answer within ProbeTimeout, or the call ends as ErrHung
	// (liveness.go). Zero: DefaultProbeAfter, DefaultProbeTimeout; negative: no probe.
	ProbeAfter, ProbeTimeout time.Duration

	versionMu sync.Mutex
	versions  *Versions // cached after the first `sbx version` that answered
}

// NewClient returns a client for the sbx program bin (PI_SBX_BIN; "" = "sbx", looked up
// in path, the host's PATH, then the usual install places), running children with env,
// the environment policy's host environment (EnvPolicy.HostEnv).
func NewClient(bin, path string, env []string, r Runner) *Client {
	found, err := FindBin(bin, path, HostDirs())
	return &Client{Bin: found, Runner: r, Env: env, Missing: err}
}

// startError explains why sbx could not be started.
func (c *Client) startError(err error) error {
	if c.Missing != nil {
		return fmt.Errorf("%w (starting %s: %v)", c.Missing, c.Bin, err)
	}
	return fmt.Errorf("starting %s: %w", c.Bin, err)
}

// call is one sbx invocation as the client runs it.
type call struct {
	op, sandbox string
	args        []string
	timeout     time.Duration // 0: client default; <0: none (bounded by ctx only)
	stdin       io.Reader
	stdout      io.Writer // nil: captured (capped at maxOut)
	stderr      io.Writer // copy of stderr, besides the captured tail
	maxOut      int
	foreground  bool
	env         []string // the child's environment; nil: the client's (c.Env)
}

// result of a finished call.
type result struct {
	code   int
	stdout []byte // when captured
	stderr string // tail
}

func (c *Client) run(ctx context.Context, cl call) (result, error) {
	if err := c.cloudCheck(cl.op, cl.sandbox, cl.args); err != nil {
		return result{code: -1}, err
	}
	cl.args = c.globals(ctx, cl.op, cl.args)
	delays := c.RetryDelays
	if delays == nil {
		delays = []time.Duration{250 * time.Millisecond, time.Second}
	}
	for attempt := 0; ; attempt++ {
		res, err := c.runOnce(ctx, cl)
		if !errors.Is(err, ErrRuntime) || attempt >= len(delays) || !rewindable(cl.stdin) {
			return res, err
		}
		select {
		case <-ctx.Done():
			return res, err
		case <-time.After(delays[attempt]):
		}
	}
}

// globals puts the global flags every call of ours carries before args: --no-input
// where the version has it, so that sbx never waits for an answer no one can give (a
// command that needs one fails, naming what to run). `sbx version` itself goes without:
// it is how the version is learnt, and it never prompts.
//
// The daemon's status and diagnose, which never prompt, use only a version already
// known: learning it (`sbx version`) could start the daemon they are asked to report on.
func (c *Client) globals(ctx context.Context, op string, args []string) []string {
	if op == "version" || len(args) > 0 && strings.HasPrefix(args[0], "-") {
		return args
	}
	if c.Cloud {
		// Never silently a local sandbox: --cloud goes on whatever the version (one too
		// old for it is refused by CheckCloud, and by sbx).
		args = append([]string{"--cloud"}, args...)
	}
	return c.noInput(ctx, op, args)
}

// noInput puts --no-input first where the version has it.
func (c *Client) noInput(ctx context.Context, op string, args []string) []string {
	v, known := c.knownVersions()
	if !known && op != "daemon status" && op != "diagnose" && op != probeOp {
		var err error
		v, err = c.Versions(ctx)
		known = err == nil
	}
	if !known || !SupportsGlobal(v.Client, "no-input") {
		return args
	}
	return append([]string{"--no-input"}, args...)
}

// rewindable reports whether stdin can be offered again to a retried call.
func rewindable(r io.Reader) bool {
	if r == nil {
		return true
	}
	s, ok := r.(io.Seeker)
	if !ok {
		return false
	}
	_, err := s.Seek(0, io.SeekStart)
	return err == nil
}

func (c *Client) runOnce(parent context.Context, cl call) (result, error) {
	ctx := parent
	timeout := cl.timeout
	if timeout == 0 {
		timeout = c.Timeout
	}
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	ctx, cancelCause := context.WithCancelCause(ctx)
	defer cancelCause(nil)
	stopWatch := c.watchHang(ctx, cancelCause, cl)
	maxOut := cl.maxOut
	if maxOut == 0 {
		maxOut = DefaultMaxOutput
	}
	var out *capped
	stdout := cl.stdout
	if stdout == nil {
		out = &capped{max: maxOut}
		stdout = out
	}
	// Every parse of sbx's stdout, and every command's output, starts after the banner
	// of a daemon that sbx had to start first. A terminal (foreground) gets it as is.
	var skipper *bannerSkipper
	if !cl.foreground {
		skipper = &bannerSkipper{w: stdout}
		stdout = skipper
	}
	tail := &tailBuffer{max: maxStderr}
	var stderr io.Writer = tail
	if cl.stderr != nil {
		stderr = io.MultiWriter(tail, cl.stderr)
	}
	fail := func(code int, err error) *Error {
		return &Error{Op: cl.op, Sandbox: cl.sandbox, ExitCode: code, Stderr: tail.String(), Err: err}
	}
	env := cl.env
	if env == nil {
		env = c.Env
	}
	p, err := c.Runner.Start(ctx, c.Bin, Cmd{Args: cl.args, Env: env, Stdin: cl.stdin, Stdout: stdout, Stderr: stderr, Foreground: cl.foreground})
	if err != nil {
		return result{code: -1}, fail(-1, c.startError(err))
	}
	code, werr := p.Wait()
	stopWatch()
	if skipper != nil {
		_ = skipper.Flush()
	}
	res := result{code: code, stderr: tail.String()}
	if out != nil {
		res.stdout = out.buf.Bytes()
	}
	switch {
	case parent.Err() != nil:
		return res, fail(code, parent.Err())
	case errors.Is(context.Cause(ctx), ErrHung):
		return res, fail(code, context.Cause(ctx))
	case ctx.Err() != nil:
		return res, fail(code, fmt.Errorf("%w (%s)", ErrTimeout, timeout))
	case werr != nil:
		return res, fail(code, werr)
	}
	if err := classify(cl.op, code, res.stderr); err != nil {
		return res, fail(code, err)
	}
	if out != nil && out.over {
		return res, fail(code, fmt.Errorf("%w: more than %d bytes on stdout", ErrOutput, maxOut))
	}
	return res, nil
}

// ExecOpts are the flags of `sbx exec`.
type ExecOpts struct {
	Interactive bool // -i: keep stdin open
	TTY         bool // -t
	// Env are KEY=VALUE pairs for the command. Only their names are in argv (-e KEY,
	// docker's form); the values reach sbx in its own environment, because argv is
	// world-readable (/proc/*/cmdline) and a forwarded variable may be a secret.
	Env     []string
	Workdir string // -w
	// User (-u) runs the command as another user than agent, e.g. root.
	User string
	// Privileged (--privileged) gives the command extended privileges (every
	// capability: a mount), as docker exec's flag does.
	Privileged bool
	Stdin      io.Reader
	// Stdout receives the command's output; when nil it is captured (capped) into
	// ExecResult.Stdout.
	Stdout io.Writer
	Stderr io.Writer // a copy of stderr as it arrives; may be nil
	// Timeout bounds the call (client default when zero, none when negative: then the
	// caller's ctx is the only bound).
	Timeout time.Duration
	// MaxOutput caps captured stdout (DefaultMaxOutput when zero).
	MaxOutput int
	// Foreground runs sbx in the caller's process group, for a terminal attached as
	// stdin (see Cmd.Foreground).
	Foreground bool
}

// ExecResult is a finished exec: the command's own exit status and output.
type ExecResult struct {
	ExitCode int
	Stdout   []byte // when captured
	Stderr   string // the tail
}

// ExecArgs builds the argument list of `sbx exec` (without the program name). Variables
// appear by name only; see ExecEnv for their values.
func ExecArgs(name string, argv []string, o ExecOpts) []string {
	args := []string{"exec"}
	if o.Interactive {
		args = append(args, "-i")
	}
	if o.TTY {
		args = append(args, "-t")
	}
	for _, kv := range o.Env {
		k, _, _ := strings.Cut(kv, "=")
		args = append(args, "-e", k)
	}
	if o.Workdir != "" {
		args = append(args, "-w", o.Workdir)
	}
	if o.User != "" {
		args = append(args, "-u", o.User)
	}
	if o.Privileged {
		args = append(args, "--privileged")
	}
	args = append(args, name, "--")
	return append(args, argv...)
}

// ExecEnv returns the environment of an `sbx exec` child: the client's scrubbed one with
// the forwarded variables set (their values replace the host's of the same name, which
// sbx itself then sees too). Every entry must be KEY=VALUE with a valid name that is not
// a docker/compose variable: a bare `-e KEY` would hand sbx's own value of KEY to the VM.
func (c *Client) ExecEnv(vars []string) ([]string, error) {
	if len(vars) == 0 {
		return c.Env, nil
	}
	env := append([]string(nil), c.Env...)
	for _, kv := range vars {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || !envName.MatchString(k) {
			return nil, fmt.Errorf("sbx exec: invalid variable %q: want NAME=VALUE", k)
		}
		if isDockerVar(k) {
			return nil, fmt.Errorf("sbx exec: %s: docker and compose variables never reach a child", k)
		}
		replaced := false
		for i, e := range env {
			if strings.HasPrefix(e, k+"=") {
				env[i], replaced = kv, true
			}
		}
		if !replaced {
			env = append(env, kv)
		}
	}
	return env, nil
}

// Exec runs argv in the sandbox. A non-zero exit of the command itself is not an error
// (see ExecResult.ExitCode); a missing sandbox, a runtime that failed to start, a
// timeout or unusable output are.
func (c *Client) Exec(ctx context.Context, name string, argv []string, o ExecOpts) (ExecResult, error) {
	if err := ValidateName(name); err != nil {
		return ExecResult{}, err
	}
	if len(argv) == 0 {
		return ExecResult{}, errors.New("sbx exec: empty command")
	}
	env, err := c.ExecEnv(o.Env)
	if err != nil {
		return ExecResult{}, err
	}
	res, err := c.run(ctx, call{
		op: "exec", sandbox: name, args: ExecArgs(name, argv, o), timeout: o.Timeout, env: env,
		stdin: o.Stdin, stdout: o.Stdout, stderr: o.Stderr, maxOut: o.MaxOutput, foreground: o.Foreground,
	})
	return ExecResult{ExitCode: res.code, Stdout: res.stdout, Stderr: res.stderr}, err
}

// CreateOpts are the arguments of `sbx create`.
type CreateOpts struct {
	Agent      string   // the agent kit; "shell" when empty
	Workspaces []string // the first is the primary (read/write)
	// Clone: --clone, the primary's git repository cloned into the VM at the same path
	// (the host repository read-only at /run/sandbox/source).
	Clone     bool
	Quiet     bool
	Resources Resources // --cpus, --memory, --template
	// Cloud are the cloud sandbox's size, time to live and fate at its end (with
	// Client.Cloud only).
	Cloud CloudOpts
	// Progress receives sbx's own output (both streams); may be nil. It must not be the
	// protocol stream.
	Progress io.Writer
	Timeout  time.Duration // DefaultCreateTimeout when zero
}

// Create creates a sandbox. A cloud sandbox (Client.Cloud) has no workspace: its files
// go in with Cp.
func (c *Client) Create(ctx context.Context, name string, o CreateOpts) error {
	if err := c.validateName(name); err != nil {
		return err
	}
	switch {
	case c.Cloud && len(o.Workspaces) > 0:
		return errors.New("sbx --cloud create: a cloud sandbox mounts no workspace")
	case !c.Cloud && len(o.Workspaces) == 0:
		return errors.New("sbx create: no workspace")
	case c.Cloud && o.Clone:
		return errors.New("sbx --cloud create: no --clone (there is no host repository to clone from)")
	}
	agent := o.Agent
	if agent == "" {
		agent = "shell"
	}
	args := []string{"create", "--name", name}
	if o.Quiet {
		args = append(args, "-q")
	}
	if err := o.Resources.Validate(); err != nil {
		return err
	}
	args = append(args, o.Resources.Args()...)
	if o.Clone {
		args = append(args, "--clone")
	}
	if c.Cloud {
		cargs, err := o.Cloud.args()
		if err != nil {
			return err
		}
		args = append(args, cargs...)
	}
	if c.supports(ctx, "create", "pull") {
		// sbx re-pulls the template on every create by default (--pull always): a new
		// session would wait for a download it does not need.
		args = append(args, "--pull", "missing")
	}
	args = append(args, agent)
	args = append(args, o.Workspaces...)
	timeout := o.Timeout
	if timeout == 0 {
		timeout = DefaultCreateTimeout
	}
	progress := o.Progress
	if progress == nil {
		progress = io.Discard
	}
	_, err := c.run(ctx, call{op: "create", sandbox: name, args: args, timeout: timeout, stdout: progress, stderr: progress})
	return err
}

// Sandbox is one entry of `sbx ls --json`.
type Sandbox struct {
	Name       string   `json:"name"`
	Status     string   `json:"status"`
	Workspaces []string `json:"workspaces,omitempty"`
}

// Ls lists the sandboxes (`sbx ls --json`). The output is size-capped and every entry
// validated: a name sbx could not have made is an error, not an entry.
func (c *Client) Ls(ctx context.Context) ([]Sandbox, error) {
	res, err := c.run(ctx, call{op: "ls", args: []string{"ls", "--json"}, maxOut: maxLsOutput})
	if err != nil {
		return nil, err
	}
	list, err := parseLs(res.stdout)
	if err != nil {
		return nil, &Error{Op: "ls", ExitCode: res.code, Err: fmt.Errorf("%w: %v", ErrOutput, err)}
	}
	return list, nil
}

// parseLs accepts {"sandboxes":[…]} (what sbx prints) and a bare array.
func parseLs(data []byte) ([]Sandbox, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, nil
	}
	var list []Sandbox
	if data[0] == '[' {
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, err
		}
	} else {
		var obj struct {
			Sandboxes []Sandbox `json:"sandboxes"`
		}
		if err := json.Unmarshal(data, &obj); err != nil {
			return nil, err
		}
		list = obj.Sandboxes
	}
	for _, s := range list {
		if err := ValidateName(s.Name); err != nil {
			return nil, err
		}
		if len(s.Status) > 64 {
			return nil, fmt.Errorf("sandbox %s: status too long", s.Name)
		}
	}
	return list, nil
}

// Lookup returns the named sandbox, or an *Error wrapping ErrMissing: from `sbx inspect
// NAME --json` where the version has it (one sandbox, not the whole list), else from
// `sbx ls --json`.
func (c *Client) Lookup(ctx context.Context, name string) (Sandbox, error) {
	if err := ValidateName(name); err != nil {
		return Sandbox{}, err
	}
	if v, err := c.Versions(ctx); err == nil && Supports(v.Client, "inspect", "json") {
		return c.Inspect(ctx, name)
	}
	list, err := c.Ls(ctx)
	if err != nil {
		return Sandbox{}, err
	}
	for _, s := range list {
		if s.Name == name {
			return s, nil
		}
	}
	return Sandbox{}, &Error{Op: "ls", Sandbox: name, ExitCode: 0, Err: ErrMissing}
}

// Inspect reads one sandbox (`sbx inspect NAME --json`, v0.55).
func (c *Client) Inspect(ctx context.Context, name string) (Sandbox, error) {
	if err := ValidateName(name); err != nil {
		return Sandbox{}, err
	}
	res, err := c.run(ctx, call{op: "inspect", sandbox: name, args: []string{"inspect", name, "--json"}, maxOut: 1 << 20})
	if err != nil {
		return Sandbox{}, err
	}
	sb, err := parseInspect(res.stdout)
	if err == nil && sb.Name != name {
		err = fmt.Errorf("asked for %s, got %q", name, sb.Name)
	}
	if err != nil {
		return Sandbox{}, &Error{Op: "inspect", Sandbox: name, Err: fmt.Errorf("%w: %v", ErrOutput, err)}
	}
	return sb, nil
}

// parseInspect reads what the backend needs of `inspect --json`: sbx documents the
// fields (agent, state, mounts, network policy, ports…) but not their keys, so the
// status is "status" or "state" and the workspaces "workspaces" (paths) or "mounts"
// (paths, or objects with a source/path).
func parseInspect(data []byte) (Sandbox, error) {
	var raw struct {
		Name       string            `json:"name"`
		Status     string            `json:"status"`
		State      string            `json:"state"`
		Workspaces []string          `json:"workspaces"`
		Mounts     []json.RawMessage `json:"mounts"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(data), &raw); err != nil {
		return Sandbox{}, err
	}
	sb := Sandbox{Name: raw.Name, Status: raw.Status, Workspaces: raw.Workspaces}
	if sb.Status == "" {
		sb.Status = raw.State
	}
	if len(sb.Workspaces) == 0 {
		for _, m := range raw.Mounts {
			var p string
			if json.Unmarshal(m, &p) != nil {
				var o struct{ Source, Path string }
				_ = json.Unmarshal(m, &o)
				if p = o.Source; p == "" {
					p = o.Path
				}
			}
			if p != "" {
				sb.Workspaces = append(sb.Workspaces, p)
			}
		}
	}
	if err := ValidateName(sb.Name); err != nil {
		return Sandbox{}, err
	}
	if len(sb.Status) > 64 {
		return Sandbox{}, fmt.Errorf("sandbox %s: status too long", sb.Name)
	}
	return sb, nil
}

// Stop stops a sandbox, keeping its state.
func (c *Client) Stop(ctx context.Context, name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	_, err := c.run(ctx, call{op: "stop", sandbox: name, args: []string{"stop", name}})
	return err
}

// Rm removes a sandbox (`sbx rm --force`).
func (c *Client) Rm(ctx context.Context, name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	_, err := c.run(ctx, call{op: "rm", sandbox: name, args: []string{"rm", "--force", name}})
	return err
}

// Ports publishes the given specs (`--publish SPEC` each) or, with none, lists the
// published ports; it returns sbx's output.
func (c *Client) Ports(ctx context.Context, name string, publish ...string) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", err
	}
	for _, p := range publish {
		if p == "" || strings.HasPrefix(p, "-") {
			return "", fmt.Errorf("sbx ports: invalid spec %q", p)
		}
	}
	if c.portGroup(ctx) {
		// The port group publishes one spec a call, and lists with `port ls`.
		for _, p := range publish {
			if _, err := c.run(ctx, call{op: "port publish", sandbox: name, args: []string{"port", "publish", name, p}, maxOut: 1 << 20}); err != nil {
				return "", err
			}
		}
		res, err := c.run(ctx, call{op: "port ls", sandbox: name, args: []string{"port", "ls", name}, maxOut: 1 << 20})
		return string(res.stdout), err
	}
	args := []string{"ports", name}
	for _, p := range publish {
		args = append(args, "--publish", p)
	}
	res, err := c.run(ctx, call{op: "ports", sandbox: name, args: args, maxOut: 1 << 20})
	return string(res.stdout), err
}

// Cp copies between host and sandbox; exactly one of src and dst is SANDBOX:PATH.
func (c *Client) Cp(ctx context.Context, src, dst string) error {
	for _, a := range []string{src, dst} {
		if a == "" || strings.HasPrefix(a, "-") {
			return fmt.Errorf("sbx cp: invalid path %q", a)
		}
	}
	_, err := c.run(ctx, call{op: "cp", args: []string{"cp", src, dst}, maxOut: 1 << 20})
	return err
}

// capped is a buffer that keeps at most max bytes and remembers it dropped some.
type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); len(p) > room {
		c.over = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return c.buf.Write(p)
}

// tailBuffer keeps the last max bytes written; safe for concurrent use.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > t.max {
		b = b[len(b)-t.max:]
	}
	return strings.TrimSpace(string(b))
}

// Started is a running `sbx exec` whose lifetime is bounded only by the context given to
// StartExec (the agent channel). Its stdio is what ExecOpts gave.
type Started struct {
	p    Process
	tail *tailBuffer
	name string
	ctx  context.Context
}

// StartExec starts argv in the sandbox and returns without waiting. ExecOpts.Timeout is
// ignored: a long-lived channel is bounded by ctx, and its users bound each exchange.
func (c *Client) StartExec(ctx context.Context, name string, argv []string, o ExecOpts) (*Started, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	if len(argv) == 0 {
		return nil, errors.New("sbx exec: empty command")
	}
	env, err := c.ExecEnv(o.Env)
	if err != nil {
		return nil, err
	}
	tail := &tailBuffer{max: maxStderr}
	var stderr io.Writer = tail
	if o.Stderr != nil {
		stderr = io.MultiWriter(tail, o.Stderr)
	}
	args := ExecArgs(name, argv, o)
	if err := c.cloudCheck("exec", name, args); err != nil {
		return nil, err
	}
	args = c.globals(ctx, "exec", args)
	p, err := c.Runner.Start(ctx, c.Bin, Cmd{Args: args, Env: env, Stdin: o.Stdin, Stdout: o.Stdout, Stderr: stderr})
	if err != nil {
		return nil, &Error{Op: "exec", Sandbox: name, ExitCode: -1, Err: c.startError(err)}
	}
	return &Started{p: p, tail: tail, name: name, ctx: ctx}, nil
}

// Wait waits for the exec to end. It returns nil for exit status 0 and otherwise an *Error
// classified like Exec's, with ErrFailed for the command's own non-zero status.
func (s *Started) Wait() error {
	code, err := s.p.Wait()
	stderr := s.tail.String()
	switch {
	case err != nil:
		return &Error{Op: "exec", Sandbox: s.name, ExitCode: code, Stderr: stderr, Err: err}
	case code == 0:
		return nil
	}
	kind := classify("exec", code, stderr)
	if kind == nil {
		kind = ErrFailed
	}
	if s.ctx.Err() != nil && kind == ErrFailed {
		kind = s.ctx.Err()
	}
	return &Error{Op: "exec", Sandbox: s.name, ExitCode: code, Stderr: stderr, Err: kind}
}

// Stderr returns the tail of what the command printed on stderr so far.
func (s *Started) Stderr() string { return s.tail.String() }

// Clone returns a client with c's settings (and what c learnt of sbx's version), for a
// caller that changes one of them (the audit's recording runner, its probe environment).
func (c *Client) Clone() *Client {
	c.versionMu.Lock()
	defer c.versionMu.Unlock()
	return &Client{Bin: c.Bin, Runner: c.Runner, Env: c.Env, Timeout: c.Timeout, RetryDelays: c.RetryDelays,
		Missing: c.Missing, ProbeAfter: c.ProbeAfter, ProbeTimeout: c.ProbeTimeout, versions: c.versions, Cloud: c.Cloud}
}
