//go:build linux

package agentlink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/vm/vmagent"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// localSbx stands in for sbx in unit tests: `exec` runs the command on this machine,
// except that the agent's own subcommands (`agent`, `tool`) run in-process. It can drop
// stdin (as some sbx versions do), pretend the sandbox is gone, and crash the agents.
type localSbx struct {
	name      string
	dropStdin bool
	hang      bool // the agent's exec starts and never answers (a hung sbx)
	failChunk int  // the failChunk-th exec writing a base64 chunk fails (0: none)

	mu      sync.Mutex
	missing bool
	execs   [][]string // argv after `exec … NAME --`
	flags   [][]string // the exec flags
	agents  []context.CancelFunc
	started int // agents started
}

func (l *localSbx) setMissing(v bool) { l.mu.Lock(); l.missing = v; l.mu.Unlock() }

func (l *localSbx) crash() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.agents {
		c()
	}
	l.agents = nil
}

func (l *localSbx) ran() [][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([][]string(nil), l.execs...)
}

func (l *localSbx) Start(ctx context.Context, _ string, c sbx.Cmd) (sbx.Process, error) {
	for len(c.Args) > 0 && (c.Args[0] == "--cloud" || c.Args[0] == "--no-input") {
		c.Args = c.Args[1:] // a cloud client's globals: the same VM here
	}
	if c.Args[0] == "cp" { // host file to NAME:/path, as a cloud sandbox's files go in
		data, err := os.ReadFile(c.Args[1])
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		l.execs = append(l.execs, []string{"cp"})
		l.mu.Unlock()
		return exited(0), os.WriteFile(strings.TrimPrefix(c.Args[2], l.name+":"), data, 0o644)
	}
	if c.Args[0] != "exec" {
		return exited(0), nil
	}
	var flags, env []string
	i := 1
	for ; c.Args[i] != l.name; i++ {
		flags = append(flags, c.Args[i])
		if c.Args[i] == "-e" {
			// docker's -e NAME: the value is in sbx's own environment
			for _, kv := range c.Env {
				if strings.HasPrefix(kv, c.Args[i+1]+"=") {
					env = append(env, kv)
				}
			}
			flags = append(flags, c.Args[i+1])
			i++
		}
	}
	argv := c.Args[i+2:]
	l.mu.Lock()
	missing := l.missing
	if !missing {
		l.execs = append(l.execs, argv)
		l.flags = append(l.flags, flags)
	}
	l.mu.Unlock()
	if missing {
		fmt.Fprintf(c.Stderr, "ERROR: no sandbox named '%s'\n", l.name)
		return exited(1), nil
	}
	if l.failChunk > 0 && len(argv) > 2 && strings.Contains(argv[2], "base64 -d") {
		l.mu.Lock()
		l.failChunk--
		fail := l.failChunk == 0
		l.mu.Unlock()
		if fail {
			fmt.Fprintln(c.Stderr, "base64: write error: No space left on device")
			return exited(1), nil
		}
	}
	if len(argv) > 6 && argv[0] == "sh" && argv[2] == verifiedRun {
		// The check before the agent runs, as the VM's shell does it.
		fp, err := exec.Command("stat", "-c", fingerprint, argv[6]).Output()
		if err != nil || strings.TrimSpace(string(fp)) != argv[5] {
			fmt.Fprintf(c.Stderr, "%s in the VM was replaced or changed\n", argv[6])
			return exited(126), nil
		}
		argv = argv[6:]
	}
	if len(argv) > 1 && argv[1] == "agent" {
		if l.hang {
			l.mu.Lock()
			l.started++
			l.mu.Unlock()
			// It holds its pipes, as a live process would, and never reads or writes.
			in, err := dup(c.Stdin)
			if err != nil {
				return nil, err
			}
			out, err := dup(c.Stdout)
			if err != nil {
				return nil, err
			}
			return hung{ctx, []io.Closer{in, out}}, nil
		}
		return l.agent(ctx, c, argv, env)
	}
	if len(argv) > 1 && argv[1] == "tool" {
		return l.tool(ctx, c, argv)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	if !l.dropStdin {
		cmd.Stdin = c.Stdin
	}
	cmd.Stdout, cmd.Stderr = c.Stdout, c.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return exited(ee.ExitCode()), nil
	}
	if err != nil {
		return nil, err
	}
	return exited(0), nil
}

// agent serves MCP in-process on duplicates of the pipes, as a child process would hold
// its own copies of them.
func (l *localSbx) agent(ctx context.Context, c sbx.Cmd, argv, env []string) (sbx.Process, error) {
	in, err := dup(c.Stdin)
	if err != nil {
		return nil, err
	}
	out, err := dup(c.Stdout)
	if err != nil {
		return nil, err
	}
	cwd := argv[len(argv)-1] // … agent --cwd DIR
	actx, cancel := context.WithCancel(ctx)
	done := make(chan int, 1)
	var once sync.Once
	exit := func(code int) {
		once.Do(func() {
			// A dead process's pipes close at once, whatever its calls were doing.
			out.Close()
			in.Close()
			done <- code
		})
	}
	l.mu.Lock()
	l.agents = append(l.agents, func() { exit(137); cancel() })
	l.started++
	l.mu.Unlock()
	go func() {
		srv, err := mcpserver.NewServer((&mcpserver.Local{Registry: vmagent.Default(), Cwd: cwd, Vars: env}).Routes(tools.Pi()), mcpserver.Options{})
		if err != nil {
			panic(err)
		}
		mcpserver.Serve(actx, srv, in, out)
		exit(0)
	}()
	return waitChan(done), nil
}

// tool runs `AGENT tool --local --cwd DIR NAME JSON|-` in-process, printing what the
// CLI prints.
func (l *localSbx) tool(ctx context.Context, c sbx.Cmd, argv []string) (sbx.Process, error) {
	cwd, name, raw := argv[4], argv[5], []byte(argv[6])
	if argv[6] == "-" {
		if l.dropStdin || c.Stdin == nil {
			raw = nil
		} else {
			var err error
			if raw, err = io.ReadAll(c.Stdin); err != nil {
				return nil, err
			}
		}
	}
	res, err := vmagent.Default().Call(ctx, cwd, name, raw, tools.Env{})
	if errors.Is(err, tools.ErrUsage) {
		fmt.Fprintln(c.Stderr, err)
		return exited(2), nil
	}
	if err != nil {
		return nil, err
	}
	return exited(0), json.NewEncoder(c.Stdout).Encode(res)
}

func dup(v any) (*os.File, error) {
	f, ok := v.(*os.File)
	if !ok {
		return nil, fmt.Errorf("want an *os.File, got %T", v)
	}
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

type exited int

func (e exited) Wait() (int, error) { return int(e), nil }

type waitChan chan int

func (w waitChan) Wait() (int, error) { return <-w, nil }

func joined(argvs [][]string) string {
	var b strings.Builder
	for _, a := range argvs {
		b.WriteString(strings.Join(a, " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// hung is an exec that never ends until its context does.
type hung struct {
	ctx   context.Context
	pipes []io.Closer
}

func (h hung) Wait() (int, error) {
	<-h.ctx.Done()
	for _, p := range h.pipes {
		p.Close()
	}
	return -1, errors.New("signal: killed")
}

func (l *localSbx) agentsStarted() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.started
}
