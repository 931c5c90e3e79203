package agentlink

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// MaxReply caps one message from the agent; a longer one breaks the channel rather than
// filling the host's memory.
const MaxReply = 64 << 20

// Target says where calls go: which sandbox, how the agent gets there, what it sees.
type Target struct {
	Sbx *sbx.Client
	// Sandbox returns the sandbox to use (the session's Ensure, or a fixed name).
	Sandbox func(ctx context.Context) (string, error)
	// Lost, if set, is told that the sandbox Sandbox returned no longer exists; true
	// means Sandbox will make it again, and the call that found it gone tries once more.
	Lost func() bool
	// Installer puts the agent binary in the VM.
	Installer *Installer
	// Env are KEY=VALUE pairs forwarded into the VM, each as an `-e` flag.
	Env []string
	// Cwd is the working directory of every call (a path inside the VM, which is the
	// host path: sbx mounts the workspace at the same place).
	Cwd string
}

// prepare finds the sandbox and returns the argv that runs the agent there with args
// (Installer.Command).
func (t *Target) prepare(ctx context.Context, args ...string) (sandbox string, argv []string, err error) {
	sandbox, err = t.Sandbox(ctx)
	if err != nil {
		return "", nil, err
	}
	argv, err = t.Installer.Command(ctx, sandbox, args...)
	return sandbox, argv, err
}

// Channel is one persistent `sbx exec -i SANDBOX -- AGENT agent` speaking MCP, shared by
// all calls (the SDK multiplexes them). After the agent dies, calls in flight fail with
// a clear error and the next call starts a new one.
type Channel struct {
	Target
	Version string
	Logger  *slog.Logger
	// Stderr receives the agent's (and sbx's) stderr; nil: discarded (a tail is kept
	// for error messages either way).
	Stderr io.Writer
	// StartTries bounds how many times one call tries to (re)start the agent.
	StartTries int
	// HandshakeTimeout bounds starting sbx exec and the MCP initialize exchange.
	HandshakeTimeout time.Duration
	// HungCooldown is how long, after a start that timed out (sbx or the VM not
	// answering), calls fail at once with that error instead of each waiting out a
	// HandshakeTimeout of its own (30 s when zero).
	HungCooldown time.Duration
	// MaxReply caps one message from the agent (MaxReply when zero).
	MaxReply int

	mu       sync.Mutex
	cur      *conn
	progress sync.Map // token string → mcpserver.Progress
	nextTok  atomic.Uint64

	hungUntil time.Time // see HungCooldown; under mu
	hungErr   error
}

// conn is one agent process and its MCP client.
type conn struct {
	client *Client
	done   chan struct{} // closed when the exec ended
	err    error         // why, valid after done
	cancel context.CancelFunc
	// closing is set by Close: the agent is then given time to exit by itself, and its
	// end is no news worth a warning.
	closing atomic.Bool
}

func (c *conn) alive() bool {
	select {
	case <-c.done:
		return false
	case <-c.client.Done(): // the agent's output ended: so did the agent (a stopped sandbox)
		return false
	default:
		return true
	}
}

// ErrAgentDied marks a call that was in flight when the agent's channel ended.
var ErrAgentDied = errors.New("the sandbox agent stopped during the call")

// errNoAnswer: starting the agent timed out, sbx (or the VM behind it) not answering.
var errNoAnswer = errors.New("no answer from the sandbox")

// CallTool implements mcpserver.Caller: the agent's answer, checked and cleaned by
// mcpserver.CleanResult, without the agent's own metadata. Its routes may take
// stand-ins (mcpserver.Route.StandIns): the channel's client splices the large strings
// back into the request as it writes it.
func (ch *Channel) CallTool(ctx context.Context, call mcpserver.Call) (json.RawMessage, error) {
	raw, err := ch.callOnce(ctx, call)
	if errors.Is(err, errOutputEnded) && rerunnable(call.Name) && ctx.Err() == nil {
		// The sandbox stopped under the channel (see restart.go): a call that changes
		// nothing runs again on a new channel, which starts the sandbox again.
		raw, err = ch.callOnce(ctx, call)
	}
	return raw, err
}

func (ch *Channel) callOnce(ctx context.Context, call mcpserver.Call) (json.RawMessage, error) {
	c, err := ch.get(ctx)
	if err != nil {
		return nil, err
	}
	var tok string
	var stream *progressStream
	if call.Progress != nil {
		tok = "p" + strconv.FormatUint(ch.nextTok.Add(1), 10)
		stream = newProgressStream(call.Progress)
		ch.progress.Store(tok, stream)
		defer ch.progress.Delete(tok)
	}
	raw, err := c.client.CallTool(ctx, call.Name, call.Args, call.StandIns, tok)
	if err == nil {
		res, total, err := mcpserver.CleanResult(make([]byte, 0, len(raw)), raw)
		if err != nil {
			return nil, err
		}
		if stream != nil && total > 0 {
			// Relay the whole stream before the result (see mcpserver.ProgressMeta).
			stream.wait(ctx, total, progressCatchUp)
		}
		return res, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeInvalidParams {
		return nil, tools.UsageError(rpcErr.Message)
	}
	// The connection breaks (EOF on the agent's stdout) a moment before the exec is
	// reaped; wait for the reason so the error says what happened.
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
	}
	if !c.alive() {
		if errors.Is(c.client.Err(), io.ErrUnexpectedEOF) {
			// The agent's output ended (not a reply we refused): the agent is gone.
			return nil, fmt.Errorf("%w (%v); the next call restarts it%w", ErrAgentDied, c.err, errOutputEnded)
		}
		return nil, fmt.Errorf("%w (%v); the next call restarts it", ErrAgentDied, c.err)
	}
	return nil, fmt.Errorf("calling %s in the sandbox: %w", call.Name, err)
}

func (ch *Channel) get(ctx context.Context) (*conn, error) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.cur != nil && ch.cur.alive() {
		return ch.cur, nil
	}
	if time.Now().Before(ch.hungUntil) {
		return nil, ch.hungErr
	}
	tries := ch.StartTries
	if tries <= 0 {
		tries = 2
	}
	var err error
	lost := false
	for try := 0; try < tries; try++ {
		var c *conn
		if c, err = ch.start(ctx); err == nil {
			ch.cur = c
			return c, nil
		}
		if errors.Is(err, sbx.ErrMissing) && !lost && ch.Lost != nil && ch.Lost() {
			lost, try = true, try-1 // removed from outside, made again: this try does not count
			continue
		}
		if errors.Is(err, sbx.ErrMissing) || ctx.Err() != nil {
			break
		}
		if errors.Is(err, errNoAnswer) || errors.Is(err, sbx.ErrHung) {
			// Another try would wait as long again: calls fail at once for a while.
			ch.hungUntil = time.Now().Add(cmp.Or(ch.HungCooldown, 30*time.Second))
			ch.hungErr = err
			break
		}
	}
	return nil, err
}

func (ch *Channel) logger() *slog.Logger {
	if ch.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return ch.Logger
}

func (ch *Channel) start(ctx context.Context) (*conn, error) {
	timeout := ch.HandshakeTimeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	hctx, cancelHandshake := context.WithTimeout(ctx, timeout)
	defer cancelHandshake()
	// What timed out is named, not left as "context deadline exceeded".
	noAnswer := func(err error, who string) error {
		if ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, sbx.ErrTimeout)) {
			return fmt.Errorf("%w: %s did not answer within %s (%v); check sbx with `sbx ls` or `pi-sbx-backend doctor`", errNoAnswer, who, timeout, err)
		}
		return err
	}
	sandbox, argv, err := ch.prepare(hctx, "agent", "--cwd", ch.Cwd)
	if err != nil {
		return nil, noAnswer(err, "sbx")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	mcpserver.GrowPipe(inW)
	mcpserver.GrowPipe(outW)
	// The channel outlives the call that started it: its own context, ended by Close.
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	started, err := ch.Sbx.StartExec(life, sandbox, argv,
		sbx.ExecOpts{Interactive: true, Env: ch.Env, Stdin: inR, Stdout: outW, Stderr: ch.Stderr})
	inR.Close()
	outW.Close()
	if err != nil {
		cancel()
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("starting the agent in sandbox %s: %w", sandbox, err)
	}
	c := &conn{done: make(chan struct{}), cancel: cancel}
	go func() {
		c.err = started.Wait()
		if c.err == nil {
			c.err = errors.New("it exited")
		}
		close(c.done)
		outR.Close() // unblock the session's reader if a grandchild still holds the pipe
	}()
	maxReply := ch.MaxReply
	if maxReply <= 0 {
		maxReply = MaxReply
	}
	// The project's own small client (strict: a line that is not one JSON-RPC message
	// ends the connection) relays results as the agent wrote them.
	// sbx prints its daemon's start-up banner on stdout before the agent's first line
	// when it had to start the daemon: never protocol.
	client, err := Dial(hctx, sbx.SkipBannerReader(outR), inW, pipes{outR, inW}, ClientOptions{
		Name: "pi-sbx-backend", Version: ch.Version, MaxLine: maxReply, OnProgress: ch.onProgress, Logger: ch.logger(),
	})
	if err != nil {
		select {
		case <-c.done:
		case <-time.After(5 * time.Second):
			cancel()
			<-c.done
		}
		cancel()
		inW.Close()
		ch.Installer.Forget(sandbox)
		err = noAnswer(errors.Join(err, c.err), "the agent, through sbx exec,")
		return nil, fmt.Errorf("starting the agent in sandbox %s%s: %w", sandbox, perCallHint(err), err)
	}
	c.client = client
	ch.logger().Info("agent started", "sandbox", sandbox, "agent", argv[5])
	go func() {
		// A connection that broke while the process lives (an oversized or undecodable
		// reply) is as dead as the process: end it, so the next call starts afresh.
		<-client.Done()
		if !c.closing.Load() {
			cancel()
		}
	}()
	go func() {
		<-c.done
		client.Close()
		cancel()
		if c.closing.Load() {
			ch.logger().Debug("agent channel closed", "sandbox", sandbox, "reason", c.err)
			return
		}
		ch.logger().Warn("agent channel ended", "sandbox", sandbox, "reason", c.err)
	}()
	return c, nil
}

// pipes closes both ends of the agent's stdio.
type pipes struct{ r, w io.Closer }

func (p pipes) Close() error { return errors.Join(p.r.Close(), p.w.Close()) }

func (ch *Channel) onProgress(tok, message string, progress float64) {
	if s, ok := ch.progress.Load(tok); ok {
		s.(*progressStream).relay(message, progress)
	}
}

// progressCatchUp bounds how long a finished call waits for its last progress
// notifications; they are already on the wire, so this only matters for a lost one.
const progressCatchUp = 2 * time.Second

// progressStream relays one call's progress notifications and lets the call wait until
// the agent's last one has been relayed.
type progressStream struct {
	forward mcpserver.Progress
	mu      sync.Mutex
	total   float64
	changed chan struct{} // closed and replaced on every relay
}

func newProgressStream(forward mcpserver.Progress) *progressStream {
	return &progressStream{forward: forward, changed: make(chan struct{})}
}

func (s *progressStream) relay(message string, total float64) {
	s.forward(message, total)
	s.mu.Lock()
	s.total = total
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// wait returns once the relayed total reaches want, ctx ends or the timeout passes.
func (s *progressStream) wait(ctx context.Context, want float64, timeout time.Duration) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		total, changed := s.total, s.changed
		s.mu.Unlock()
		if total >= want {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		case <-deadline.C:
			return
		}
	}
}

// Close ends the agent: stdin is closed so it exits by itself; sbx is killed if it does
// not finish in time.
func (ch *Channel) Close() error {
	ch.mu.Lock()
	c := ch.cur
	ch.cur = nil
	ch.mu.Unlock()
	if c == nil {
		return nil
	}
	c.closing.Store(true)
	err := c.client.Close()
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		c.cancel()
		<-c.done
	}
	c.cancel()
	return err
}
