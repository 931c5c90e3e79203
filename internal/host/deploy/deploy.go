// Package deploy implements the docker_* tools on the host: a private Docker daemon
// inside the session's sandbox, reached only as `sbx exec <sandbox> -- docker -H
// unix:///var/run/docker.sock …` through sbx/. It builds argv from validated arguments
// (path confinement to the workspace, no option injection), publishes container ports on
// host loopback with `sbx ports`, makes host-side HTTP requests to those ports only
// (docker_curl), writes docker_init scaffolds through the sandbox, audits the isolation
// live (docker_verify) and collects stale sandboxes (docker_gc).
//
// It never starts a process itself, never opens a Docker socket and never speaks the
// Docker Engine API; the only network connections it makes are docker_curl's and the
// audit's, to host loopback ports the sandbox published.
package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/lifecycle"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/settings"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// Pin is the daemon every docker call is pinned to: the sandbox's own.
const Pin = "unix:///var/run/docker.sock"

// Timeouts of docker calls by kind.
const (
	ShortTimeout = 2 * time.Minute  // inspect, ps, logs, exec, stop, …
	LongTimeout  = 10 * time.Minute // pull, build, compose, foreground run, prune
)

// MaxOutput caps the text of one result; the middle of longer output is dropped.
const MaxOutput = 48 << 10

// Label marks every container a docker_run started; PortsLabel records its port specs
// so that start can publish them again and stop/rm unpublish them.
const (
	Label      = "com.pi.sandbox"
	PortsLabel = "com.pi.sandbox.ports"
)

// EnvPolicy is how host variables reach sbx and the VM (sbx.EnvPolicy); the audit probes
// the policy in use.
type EnvPolicy interface {
	HostEnv(environ []string) []string
	VMEnv(environ []string) []string
}

// Config is what the tools need; every dependency is explicit.
type Config struct {
	Sbx *sbx.Client
	// Sandbox returns the session's sandbox, creating it on first need (Session.Ensure).
	Sandbox func(ctx context.Context) (string, error)
	// Name is the session's sandbox name (known before it exists).
	Name      string
	Workspace string // absolute host path, mounted at the same path in the sandbox
	ReadOnly  bool   // DOCKER_SANDBOX_WORKSPACE_RO: workspace binds get :ro
	Pinned    bool   // DOCKER_SANDBOX named it
	Teardown  string // remove | stop | none
	// Settings are the session's: the audit's probes start from their host environment,
	// the reported modes are theirs, and it checks their HOME and host Docker sockets are
	// not visible in the sandbox (nothing of them is passed to docker).
	Settings settings.Settings
	// Policy is the env policy calls go through; nil is the settings' (the audit probes
	// the one in use).
	Policy EnvPolicy
	Owners *lifecycle.Owners // owner records for GC; nil: GC keeps everything
	// Removed, if set, is told that docker_sandbox_rm removed the sandbox on purpose,
	// so that the session does not make it again (lifecycle.Session.Removed).
	Removed func()
	// SaveWork, if set, saves a review sandbox's work before GC removes it and says when
	// it must be kept (keep.Keeper.Save); ForceGC removes it all the same.
	SaveWork func(ctx context.Context, name string) error
	// KeepWork, if set, is SaveWork for a GC without ForceGC: it may keep a stopped
	// sandbox on what the host already knows, without starting it (keep.Keeper.SaveStopped).
	KeepWork func(ctx context.Context, name string) error
	ForceGC  bool
	// UsedCloud, if set, says whether this user has had cloud sandboxes (their review
	// records): GC then sweeps the cloud side too, by the same rules.
	UsedCloud func() bool
}

// Deployer runs the docker_* tools. It is a mcpserver.Caller.
type Deployer struct {
	Config
	mu        sync.Mutex
	published map[string][]sbx.Published // container → host mappings this session made
	hold      sync.Mutex                 // one holdWriters at a time
	removed   bool                       // docker_sandbox_rm removed the session's sandbox (under mu)
	// unpinned drops -H from docker calls: only tests set it, to show the audit's
	// pinning check fail.
	unpinned bool
}

// New checks cfg and returns a Deployer.
func New(cfg Config) (*Deployer, error) {
	switch {
	case cfg.Sbx == nil || cfg.Sandbox == nil:
		return nil, errors.New("deploy: needs an sbx client and a sandbox")
	case cfg.Workspace == "" || cfg.Workspace[0] != '/':
		return nil, fmt.Errorf("deploy: workspace %q is not absolute", cfg.Workspace)
	}
	if cfg.Policy == nil {
		cfg.Policy = cfg.Settings.Policy
	}
	return &Deployer{Config: cfg, published: map[string][]sbx.Published{}}, nil
}

// Routes routes every docker_* tool to d.
func (d *Deployer) Routes() []mcpserver.Route {
	return mcpserver.Routes(tools.Docker(), mcpserver.Typed(d.CallTool))
}

// handler runs one tool with its decoded arguments and returns the result text; an error
// is shown to the model as the tool's error (isError), never run anywhere else.
type handler func(d *Deployer, ctx context.Context, args json.RawMessage) (string, error)

var handlers = map[string]handler{
	"docker_status":     (*Deployer).status,
	"docker_verify":     (*Deployer).verifyTool,
	"docker_images":     (*Deployer).images,
	"docker_ps":         (*Deployer).ps,
	"docker_pull":       (*Deployer).pull,
	"docker_run":        (*Deployer).run,
	"docker_logs":       (*Deployer).logs,
	"docker_exec":       (*Deployer).exec,
	"docker_build":      (*Deployer).build,
	"docker_init":       (*Deployer).initTool,
	"docker_compose":    (*Deployer).compose,
	"docker_stop":       (*Deployer).stop,
	"docker_start":      (*Deployer).start,
	"docker_rm":         (*Deployer).rm,
	"docker_curl":       (*Deployer).curl,
	"docker_resources":  (*Deployer).resources,
	"docker_prune":      (*Deployer).prune,
	"docker_sandbox_rm": (*Deployer).sandboxRm,
	"docker_gc":         (*Deployer).gcTool,
}

// CallTool runs one docker_* call (Routes gives it to the server as a mcpserver.Typed).
// Arguments arrive validated against the tool's description.
func (d *Deployer) CallTool(ctx context.Context, c mcpserver.Call) (*mcp.CallToolResult, error) {
	h, ok := handlers[c.Name]
	if !ok {
		_, err := tools.Lookup(tools.Docker(), c.Name)
		return nil, err
	}
	text, err := h(d, ctx, c.Args)
	limit := MaxOutput
	if c.Name == "docker_curl" {
		limit = maxCurlResult // the response's own cap, and its headers
	}
	if err != nil {
		msg := err.Error()
		if text != "" {
			msg = text + "\n" + msg
		}
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: capTextAt(msg, limit)}}}, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: capTextAt(text, limit)}}}, nil
}

// decode unmarshals validated arguments.
func decode[T any](raw json.RawMessage) (T, error) {
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("arguments: %w", err)
	}
	return v, nil
}

// out is one finished docker command.
type out struct {
	stdout, stderr string
	code           int
}

// text is what a model sees of a command: its output, and its status when it failed.
func (o out) text() string {
	s := strings.TrimRight(o.stdout, "\n")
	if e := strings.TrimSpace(o.stderr); e != "" {
		if s != "" {
			s += "\n"
		}
		s += e
	}
	return s
}

func (o out) err(what string) error {
	if o.code == 0 {
		return nil
	}
	msg := strings.TrimSpace(o.stderr)
	if msg == "" {
		msg = strings.TrimSpace(o.stdout)
	}
	return fmt.Errorf("%s failed (exit status %d): %s", what, o.code, capText(msg))
}

// sandbox returns the session's sandbox name, creating it if needed.
func (d *Deployer) sandbox(ctx context.Context) (string, error) {
	name, err := d.Sandbox(ctx)
	if err != nil {
		return "", fmt.Errorf("the Docker sandbox is not available: %w", err)
	}
	return name, nil
}

// docker runs `docker -H unix:///var/run/docker.sock ARGS…` in the sandbox. A non-zero
// exit of docker is in out.code; an error means the sandbox could not run it.
func (d *Deployer) docker(ctx context.Context, timeout time.Duration, args ...string) (out, error) {
	return d.inSandbox(ctx, timeout, nil, append(d.dockerPrefix(), args...)...)
}

// dockerOK is docker, with a non-zero exit turned into an error naming what failed.
func (d *Deployer) dockerOK(ctx context.Context, timeout time.Duration, what string, args ...string) (out, error) {
	o, err := d.docker(ctx, timeout, args...)
	if err != nil {
		return o, err
	}
	return o, o.err(what)
}

// inSandbox runs argv in the sandbox with output capped.
func (d *Deployer) inSandbox(ctx context.Context, timeout time.Duration, env []string, argv ...string) (out, error) {
	name, err := d.sandbox(ctx)
	if err != nil {
		return out{}, err
	}
	return d.execIn(ctx, d.Sbx, name, timeout, env, nil, argv...)
}

func (d *Deployer) execIn(ctx context.Context, c *sbx.Client, name string, timeout time.Duration, env []string, stdin []byte, argv ...string) (out, error) {
	stdout, stderr := &headTail{max: 4 * MaxOutput}, &headTail{max: MaxOutput}
	o := sbx.ExecOpts{Timeout: timeout, Env: env, Stdout: stdout, Stderr: stderr}
	if stdin != nil {
		o.Interactive, o.Stdin = true, strings.NewReader(string(stdin))
	}
	res, err := c.Exec(ctx, name, argv, o)
	if err != nil {
		return out{stdout: stdout.String(), stderr: stderr.String(), code: res.ExitCode}, fmt.Errorf("in sandbox %s: %w", name, err)
	}
	return out{stdout: stdout.String(), stderr: stderr.String(), code: res.ExitCode}, nil
}

// headTail keeps the first and last max/2 bytes written.
type headTail struct {
	max     int
	head    []byte
	tail    []byte
	dropped int64
}

func (h *headTail) Write(p []byte) (int, error) {
	n := len(p)
	if room := h.max/2 - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	h.tail = append(h.tail, p...)
	if over := len(h.tail) - h.max/2; over > 0 {
		h.dropped += int64(over)
		h.tail = append(h.tail[:0], h.tail[over:]...)
	}
	return n, nil
}

func (h *headTail) String() string {
	if h.dropped == 0 {
		return string(h.head) + string(h.tail)
	}
	return fmt.Sprintf("%s\n[… %d bytes of output omitted …]\n%s", h.head, h.dropped, h.tail)
}

// capText bounds a result's text.
func capText(s string) string { return capTextAt(s, MaxOutput) }

func capTextAt(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	h := &headTail{max: limit}
	h.Write([]byte(s))
	return h.String()
}
