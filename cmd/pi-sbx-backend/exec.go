//go:build linux

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/shell"
)

// execFlags are exec's options, parsed like docker exec's: -i, -t, -it, --cwd DIR.
type execFlags struct {
	interactive, tty bool
	cwd              string
	argv             []string
}

func execCommand() command {
	return command{
		name:     "exec",
		synopsis: "[-i] [-t] [--cwd DIR] [--] CMD [ARG...]",
		summary:  "run a command through shell/ on this machine ([-it] for a terminal)",
		help: `Runs CMD with its arguments (no shell) on this machine, the way the agent runs commands
in the VM, and exits with its status (128+n after signal n). Without -i it reads nothing;
-i gives it this stdin; -t runs it under a pseudo-terminal (raw mode on yours, window-size
changes forwarded). A debugging aid: it never touches a sandbox.`,
		// exec parses its flags like docker exec (-it)
		flagDocs: [][2]string{
			{"-i, --interactive", "keep stdin open: the command reads this process's stdin"},
			{"-t, --tty", "run the command under a pseudo-terminal"},
			{"--cwd DIR", "working directory (default: the current directory)"},
		},
		run: runExec,
	}
}

// runExec: pi-sbx-backend exec [-i] [-t] [--cwd DIR] -- CMD [ARG…]. It runs CMD on this
// machine through shell/ — under a pseudo-terminal with -t — and exits with its status.
func runExec(ctx context.Context, std stdio, args []string) error {
	f, err := parseExecFlags(args)
	if err != nil {
		return err
	}
	var code int
	if f.tty {
		code, err = execTTY(ctx, std, f)
	} else {
		in := std.in
		if !f.interactive {
			in = nil // /dev/null
		}
		code, err = shell.Run(ctx, f.argv, shell.RunOptions{
			Dir: f.cwd, Stdin: in, Stdout: std.out, Stderr: std.err, Foreground: true,
		})
	}
	if err != nil {
		return err
	}
	if code != 0 {
		return exitError{code}
	}
	return nil
}

func parseExecFlags(args []string) (execFlags, error) {
	var f execFlags
	for len(args) > 0 {
		a := args[0]
		args = args[1:]
		switch {
		case a == "--":
			f.argv = args
			args = nil
		case a == "-h" || a == "-help" || a == "--help":
			return f, flag.ErrHelp
		case a == "--interactive":
			f.interactive = true
		case a == "--tty":
			f.tty = true
		case a == "--cwd" || a == "-cwd":
			if len(args) == 0 {
				return f, usagef("--cwd needs a directory")
			}
			f.cwd, args = args[0], args[1:]
		case strings.HasPrefix(a, "--cwd="):
			f.cwd = strings.TrimPrefix(a, "--cwd=")
		case len(a) > 1 && a[0] == '-' && strings.Trim(a[1:], "it") == "":
			f.interactive = f.interactive || strings.Contains(a, "i")
			f.tty = f.tty || strings.Contains(a, "t")
		case strings.HasPrefix(a, "-"):
			return f, usagef("unknown flag %s", a)
		default:
			f.argv = append([]string{a}, args...)
			args = nil
		}
	}
	if len(f.argv) == 0 {
		return f, usagef("no command to run")
	}
	return f, nil
}

// execTTY runs the command under a pty. With -i and a terminal on stdin, that terminal
// goes into raw mode so every key reaches the command; its window size follows ours.
func execTTY(ctx context.Context, std stdio, f execFlags) (int, error) {
	inFile, _ := std.in.(*os.File)
	outFile, _ := std.out.(*os.File)
	sizeFrom := -1 // the descriptor whose window size the pty copies
	switch {
	case inFile != nil && term.IsTerminal(int(inFile.Fd())):
		sizeFrom = int(inFile.Fd())
	case outFile != nil && term.IsTerminal(int(outFile.Fd())):
		sizeFrom = int(outFile.Fd())
	}
	var cols, rows uint16
	if sizeFrom >= 0 {
		if w, h, err := term.GetSize(sizeFrom); err == nil {
			cols, rows = uint16(w), uint16(h)
		}
	}
	sess, err := shell.StartPty(ctx, f.argv, shell.PtyOptions{Dir: f.cwd, Cols: cols, Rows: rows})
	if err != nil {
		return 0, err
	}
	defer sess.Close()

	if f.interactive && inFile != nil && term.IsTerminal(int(inFile.Fd())) {
		old, err := term.MakeRaw(int(inFile.Fd()))
		if err != nil {
			return 0, fmt.Errorf("raw mode: %w", err)
		}
		defer term.Restore(int(inFile.Fd()), old)
	}
	if sizeFrom >= 0 {
		winch := make(chan os.Signal, 1)
		signal.Notify(winch, syscall.SIGWINCH)
		defer signal.Stop(winch)
		go func() {
			for {
				select {
				case <-winch:
					if w, h, err := term.GetSize(sizeFrom); err == nil {
						_ = sess.Resize(uint16(w), uint16(h))
					}
				case <-sess.Done():
					return
				}
			}
		}()
	}
	if f.interactive {
		fromTerminal := inFile != nil && term.IsTerminal(int(inFile.Fd()))
		go func() { _ = copyInput(sess, std.in, !fromTerminal) }() // ends with our process
	}
	copied := make(chan error, 1)
	go func() {
		_, err := ioCopy(std.out, sess)
		copied <- err
	}()
	code, err := sess.Wait()
	// Output normally ends (EIO) as the command exits; a background process that
	// keeps the terminal open must not keep us, so give it a moment, then close.
	select {
	case <-copied:
	case <-time.After(time.Second):
	}
	return code, err
}

// copyInput forwards keystrokes until either side ends. Input that is not a terminal
// (a pipe, a file) ends with ^D, which is how a terminal says end of input: one after a
// complete line, two to first hand over a partial one.
func copyInput(dst *shell.Pty, src io.Reader, sendEOF bool) error {
	last := &lastByte{w: dst, b: '\n'}
	_, err := ioCopy(last, src)
	if err != nil {
		if errors.Is(err, os.ErrClosed) {
			return nil
		}
		return err
	}
	if !sendEOF {
		return nil
	}
	eof := "\x04"
	if last.b != '\n' {
		eof = "\x04\x04"
	}
	_, err = dst.Write([]byte(eof))
	return err
}

// lastByte remembers the last byte written through it.
type lastByte struct {
	w io.Writer
	b byte
}

func (l *lastByte) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	if n > 0 {
		l.b = p[n-1]
	}
	return n, err
}

// ioCopy is io.Copy with a small buffer, so interactive output is not held back.
func ioCopy(dst io.Writer, src io.Reader) (int64, error) {
	return io.CopyBuffer(dst, src, make([]byte, 32<<10))
}
