package shell

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// term drives a Pty like a person at a terminal: it collects all output and waits
// for expected text to appear after what was already matched.
type term struct {
	t    *testing.T
	p    *Pty
	mu   sync.Mutex
	out  bytes.Buffer
	seen int
	eof  chan error
}

func startTerm(t *testing.T, argv []string, o PtyOptions) *term {
	t.Helper()
	p, err := StartPty(context.Background(), argv, o)
	require.NoError(t, err)
	tm := &term{t: t, p: p, eof: make(chan error, 1)}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := p.Read(buf)
			tm.mu.Lock()
			tm.out.Write(buf[:n])
			tm.mu.Unlock()
			if err != nil {
				tm.eof <- err
				return
			}
		}
	}()
	t.Cleanup(func() { p.Close() })
	return tm
}

func (tm *term) send(s string) {
	tm.t.Helper()
	_, err := tm.p.Write([]byte(s))
	require.NoError(tm.t, err)
}

// expect waits until want appears in the output after the previous match. The
// deadline only bounds a hang; the assertion is that the text arrives.
func (tm *term) expect(want string) {
	tm.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		tm.mu.Lock()
		out := tm.out.String()
		tm.mu.Unlock()
		if i := strings.Index(out[tm.seen:], want); i >= 0 {
			tm.seen += i + len(want)
			return
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("terminal never showed %q; output after last match:\n%q\nall output:\n%q", want, out[tm.seen:], out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Output the test wants is computed by the shell ($((…))) so the echo of the typed
// command cannot match it.
func TestPtyInteractiveBash(t *testing.T) {
	tm := startTerm(t, []string{"bash", "--norc", "--noprofile", "-i"}, PtyOptions{
		Env:  []string{"PS1=PROMPT> ", "TERM=dumb"},
		Cols: 80, Rows: 24,
	})
	tm.expect("PROMPT> ")
	tm.send("test -t 0 && test -t 1 && echo TTY-$((40+2))\n")
	tm.expect("TTY-42")
	tm.send("stty size\n")
	tm.expect("24 80")

	tm.send("trap 'echo WINCH-$((2+3))' WINCH\n")
	tm.expect("WINCH\r\nPROMPT> ") // the trap is set once its line was read
	require.NoError(t, tm.p.Resize(100, 30))
	tm.expect("WINCH-5") // the shell got SIGWINCH
	tm.send("stty size\n")
	tm.expect("30 100")

	tm.send("exit 7\n")
	code, err := tm.p.Wait()
	require.NoError(t, err)
	assert.Equal(t, 7, code)
	assert.Equal(t, io.EOF, <-tm.eof, "end of output reads as EOF, not EIO")
}

func TestPtyCatEchoAndEOF(t *testing.T) {
	tm := startTerm(t, []string{"cat"}, PtyOptions{})
	tm.send("hello\n")
	tm.expect("hello\r\n") // the terminal's echo
	tm.expect("hello\r\n") // cat's copy
	tm.send("\x04")        // ^D at the start of a line: end of input
	code, err := tm.p.Wait()
	require.NoError(t, err)
	assert.Equal(t, 0, code)
	assert.Equal(t, io.EOF, <-tm.eof)
}

func TestPtySignalAndClose(t *testing.T) {
	tests := []struct {
		name string
		stop func(*Pty) error
		want int
	}{
		{"interrupt reaches the foreground job", func(p *Pty) error { return p.Signal(syscall.SIGINT) }, 128 + int(syscall.SIGINT)},
		{"terminate", func(p *Pty) error { return p.Signal(syscall.SIGTERM) }, 128 + int(syscall.SIGTERM)},
		{"close kills", func(p *Pty) error { return p.Close() }, 128 + int(syscall.SIGKILL)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tm := startTerm(t, []string{"sh", "-c", "echo READY-$((1+1)); exec sleep 60"}, PtyOptions{})
			tm.expect("READY-2")
			require.NoError(t, tt.stop(tm.p))
			code, err := tm.p.Wait()
			require.NoError(t, err)
			assert.Equal(t, tt.want, code)
		})
	}
}

func TestPtyContextCancelKills(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p, err := StartPty(ctx, []string{"sleep", "60"}, PtyOptions{Dir: t.TempDir()})
	require.NoError(t, err)
	defer p.Close()
	cancel()
	code, err := p.Wait()
	require.NoError(t, err)
	assert.Equal(t, 128+int(syscall.SIGKILL), code)
}

func TestPtyStartErrors(t *testing.T) {
	_, err := StartPty(context.Background(), nil, PtyOptions{})
	assert.Error(t, err)
	_, err = StartPty(context.Background(), []string{"/nonexistent/program"}, PtyOptions{})
	require.Error(t, err)
	assert.True(t, errors.Is(err, syscall.ENOENT), "%v", err)
}

// The master is close-on-exec (a command started beside it must not inherit the
// terminal) and non-blocking (so Close interrupts a Read).
func TestOpenPtyMasterFlags(t *testing.T) {
	master, tty, err := openPty()
	require.NoError(t, err)
	defer master.Close()
	defer tty.Close()
	rc, err := master.SyscallConn() // not Fd(), which may put the file in blocking mode
	require.NoError(t, err)
	var fdFlags, flFlags int
	require.NoError(t, rc.Control(func(fd uintptr) {
		fdFlags, _ = unix.FcntlInt(fd, unix.F_GETFD, 0)
		flFlags, _ = unix.FcntlInt(fd, unix.F_GETFL, 0)
	}))
	assert.NotZero(t, fdFlags&unix.FD_CLOEXEC, "FD_CLOEXEC")
	assert.NotZero(t, flFlags&unix.O_NONBLOCK, "O_NONBLOCK")
}
