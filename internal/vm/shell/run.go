package shell

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// RunOptions describe a plain command (no terminal).
type RunOptions struct {
	Dir            string   // working directory; "" means the current one
	Env            []string // added to the process's environment; a later KEY wins
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Foreground keeps the command in the caller's process group, so a terminal's job
	// control (^C, reading from the terminal) reaches it as it reaches the caller.
	// Otherwise it gets a process group of its own, killed as a whole on cancellation.
	Foreground bool
}

// ioDrain bounds how long Run waits, after the command exited, for copying of
// non-file streams (a terminal on stdin may never deliver another byte).
const ioDrain = time.Second

// Run runs argv to completion and returns its exit code (128 + n for a death by
// signal n). Cancelling ctx kills it (its process group unless Foreground).
func Run(ctx context.Context, argv []string, o RunOptions) (int, error) {
	cmd, err := command(ctx, "run", argv, o.Dir, o.Env)
	if err != nil {
		return 0, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.Stdin, o.Stdout, o.Stderr
	cmd.WaitDelay = ioDrain
	if !o.Foreground {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error {
			killGroup(cmd.Process.Pid)
			return nil
		}
	}
	err = cmd.Run()
	if cmd.ProcessState == nil {
		return 0, fmt.Errorf("run %s: %w", argv[0], err)
	}
	code, ok := exitCode(cmd.ProcessState)
	if !ok {
		return 0, fmt.Errorf("run %s: no exit status: %w", argv[0], err)
	}
	return code, nil
}

// command is argv's exec.Cmd, run in dir with env added to this process's environment
// (a later KEY wins) and git's configuration for a shared workspace (withGitConfig);
// what names the caller in the error for an empty argv.
func command(ctx context.Context, what string, argv []string, dir string, env []string) (*exec.Cmd, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("%s: no command", what)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, withGitConfig(append(os.Environ(), env...))
	return cmd, nil
}
