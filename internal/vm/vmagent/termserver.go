package vmagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/jsonwire"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// The terminal server holds the session table for agents that do not outlive a call:
// with serve's per-call transport every call is a `tool --local` process of its own, and
// a session must survive it. The first such call starts the server (detached, in the
// VM); every call then asks it over a unix socket beside the sessions' logs, private to
// the user. One request per connection: a JSON line {name, cwd, args, vars}, answered by
// a JSON line {result} or {error}. A client that goes away cancels its call's wait.

// maxRequest caps one request line (terminal tool arguments are small).
const maxRequest = 4 << 20

// termRequest is one call to the terminal server.
type termRequest struct {
	Name string          `json:"name"`
	Cwd  string          `json:"cwd"`
	Args json.RawMessage `json:"args"`
	Vars []string        `json:"vars,omitempty"`
}

// termResponse is its answer.
type termResponse struct {
	Result *result.Result `json:"result,omitempty"`
	Error  string         `json:"error,omitempty"`
}

// TerminalSocket is where the terminal server listens.
func TerminalSocket() string { return filepath.Join(TerminalLogDir(), "server.sock") }

// ListenTerminals takes the server's lock and socket at path: it returns a nil listener
// (and no error) when another server holds the lock, which then serves. A socket file
// left by a server that died is replaced.
func ListenTerminals(path string) (net.Listener, func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, fmt.Errorf("creating the terminal server's directory: %w", err)
	}
	lock, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the terminal server's lock: %w", err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, nil, nil // another server runs
		}
		return nil, nil, fmt.Errorf("locking the terminal server's lock: %w", err)
	}
	_ = os.Remove(path) // the lock is ours, so no server listens there
	ln, err := net.Listen("unix", path)
	if err != nil {
		lock.Close()
		return nil, nil, fmt.Errorf("listening on %s: %w", path, err)
	}
	return ln, func() { ln.Close(); lock.Close() }, nil
}

// ServeTerminals answers terminal tool calls on ln with reg until ctx ends, or until it
// has had no connection for idle while busy reports nothing held (no session left to
// come back to).
func ServeTerminals(ctx context.Context, ln net.Listener, reg *Registry, idle time.Duration, busy func() bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	active, last := 0, time.Now()
	go func() {
		t := time.NewTicker(min(idle/4+time.Millisecond, 30*time.Second))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				ln.Close()
				return
			case <-t.C:
				mu.Lock()
				quiet := active == 0 && time.Since(last) > idle
				mu.Unlock()
				if quiet && !busy() {
					cancel()
				}
			}
		}
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("terminal server: %w", err)
		}
		mu.Lock()
		active++
		mu.Unlock()
		go func() {
			defer func() {
				mu.Lock()
				active--
				last = time.Now()
				mu.Unlock()
			}()
			serveTerminalConn(ctx, c, reg)
		}()
	}
}

func serveTerminalConn(ctx context.Context, c net.Conn, reg *Registry) {
	defer c.Close()
	line, tooLong, err := jsonwire.NewLineReader(c).ReadLine(maxRequest)
	if err != nil || tooLong {
		return
	}
	var req termRequest
	var resp termResponse
	if err := json.Unmarshal(line, &req); err != nil {
		resp.Error = fmt.Sprintf("terminal server: bad request: %v", err)
	} else {
		ctx, cancel := context.WithCancel(ctx)
		go func() { // the client closing its end (it was cancelled, or died) ends the wait
			_, _ = io.Copy(io.Discard, c)
			cancel()
		}()
		res, err := reg.Run(ctx, req.Cwd, req.Name, req.Args, tools.Env{Vars: req.Vars})
		cancel()
		if err != nil {
			resp.Error = err.Error()
		} else {
			resp.Result = &res
		}
	}
	b, err := json.Marshal(resp)
	if err == nil {
		_, _ = c.Write(append(b, '\n'))
	}
}

// TerminalDialer reaches the terminal server, starting it when none answers.
type TerminalDialer struct {
	Socket string
	// Start starts a server (detached) that will listen on Socket.
	Start func() error
	// StartTimeout bounds the wait for a started server to answer (5 s when zero).
	StartTimeout time.Duration
}

func (d *TerminalDialer) dial(ctx context.Context) (net.Conn, error) {
	var dialer net.Dialer
	c, err := dialer.DialContext(ctx, "unix", d.Socket)
	if err == nil {
		return c, nil
	}
	if err := d.Start(); err != nil {
		return nil, fmt.Errorf("starting the terminal server: %w", err)
	}
	wait := d.StartTimeout
	if wait == 0 {
		wait = 5 * time.Second
	}
	deadline := time.Now().Add(wait)
	for {
		c, err := dialer.DialContext(ctx, "unix", d.Socket)
		if err == nil {
			return c, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("the terminal server did not answer on %s: %w", d.Socket, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TerminalClient returns the terminal tools as calls to the terminal server d reaches:
// what `tool --local` (serve's per-call transport) runs, so that sessions outlive it.
func TerminalClient(d *TerminalDialer) []Impl {
	var out []Impl
	for _, im := range Terminal(nil) {
		name := im.Tool.Name
		im.Run = func(ctx context.Context, cwd string, raw json.RawMessage, env tools.Env) (result.Result, error) {
			return d.call(ctx, termRequest{Name: name, Cwd: cwd, Args: raw, Vars: env.Vars})
		}
		out = append(out, im)
	}
	return out
}

func (d *TerminalDialer) call(ctx context.Context, req termRequest) (result.Result, error) {
	c, err := d.dial(ctx)
	if err != nil {
		return result.Result{}, err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	b, err := json.Marshal(req)
	if err != nil {
		return result.Result{}, err
	}
	if _, err := c.Write(append(b, '\n')); err != nil {
		return result.Result{}, fmt.Errorf("asking the terminal server: %w", err)
	}
	line, tooLong, err := jsonwire.NewLineReader(c).ReadLine(agentReplyMax)
	if err != nil {
		if ctx.Err() != nil {
			return result.Result{}, ctx.Err()
		}
		return result.Result{}, fmt.Errorf("reading the terminal server's answer: %w", err)
	}
	if tooLong {
		return result.Result{}, fmt.Errorf("the terminal server's answer is longer than %d bytes", agentReplyMax)
	}
	var resp termResponse
	if err := json.Unmarshal(line, &resp); err != nil {
		return result.Result{}, fmt.Errorf("the terminal server's answer: %w", err)
	}
	if resp.Error != "" || resp.Result == nil {
		return result.Result{}, fmt.Errorf("terminal server: %s", resp.Error)
	}
	return *resp.Result, nil
}

// agentReplyMax caps the terminal server's answer (a reply holds at most pi's 50KB of
// text, and its details).
const agentReplyMax = 4 << 20
