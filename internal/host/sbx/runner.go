package sbx

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"time"
)

// Cmd is one invocation of the sbx program.
type Cmd struct {
	Args   []string // arguments after the program name
	Env    []string // the complete environment of the child (already scrubbed)
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Foreground keeps the child in the caller's process group, so that it can read
	// from the terminal the user types into (an interactive shell); otherwise it gets a
	// group of its own, which cancellation kills whole.
	Foreground bool
}

// Process is a started sbx invocation.
type Process interface {
	// Wait waits for the process to exit and returns its exit status. err is set when
	// the process could not be waited for or died from a signal.
	Wait() (code int, err error)
}

// Runner starts the sbx program. It is the seam tests replace; ExecRunner is the real one.
type Runner interface {
	// Start starts bin with c. The process must be killed when ctx ends.
	Start(ctx context.Context, bin string, c Cmd) (Process, error)
}

// ExecRunner starts real processes with os/exec, each in its own process group so that a
// cancelled call kills sbx and anything it started.
type ExecRunner struct{}

// Start implements Runner.
func (ExecRunner) Start(ctx context.Context, bin string, c Cmd) (Process, error) {
	cmd := exec.CommandContext(ctx, bin, c.Args...)
	cmd.Env = c.Env
	if cmd.Env == nil {
		cmd.Env = []string{} // nil would mean "inherit everything"
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Stdin, c.Stdout, c.Stderr
	if !c.Foreground {
		setProcessGroup(cmd)
	}
	// A non-file stdin is copied by a goroutine that may block on a reader nobody
	// closes; bound the wait for it after the process is gone.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return execProcess{cmd}, nil
}

type execProcess struct{ cmd *exec.Cmd }

func (p execProcess) Wait() (int, error) {
	err := p.cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode(), nil
	case errors.Is(err, exec.ErrWaitDelay):
		return p.cmd.ProcessState.ExitCode(), nil
	default:
		return -1, err
	}
}
