package shell

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// collect gathers PtyExec's output chunks.
type collect struct {
	mu     sync.Mutex
	chunks []string
}

func (c *collect) add(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.chunks = append(c.chunks, s)
}

func (c *collect) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.chunks, "")
}

func TestPtyExec(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		command string
		env     []string
		want    string // the output, with the terminal's \r\n as \n
		code    int
	}{
		{"a terminal", `test -t 1 && test -t 2 && echo tty; tput cols; stty size </dev/tty`, []string{"TERM=xterm"}, "tty\n100\n30 100\n", 0},
		// Nobody types into a `!` command: stdin is at end-of-file, as under pi.
		{"no input", `test -t 0 || echo no-tty-in; read x; echo "got=$x rc=$?"`, nil, "no-tty-in\ngot= rc=1\n", 0},
		// Pagers pass text through, whatever the caller's environment asks for.
		{"no pager", `echo "$PAGER $GIT_PAGER $MANPAGER"`, []string{"PAGER=less", "GIT_PAGER=less"}, "cat cat cat\n", 0},
		{"exit code", `echo out; exit 3`, nil, "out\n", 3},
		{"signal", `kill -TERM $$`, nil, "", 128 + int(syscall.SIGTERM)},
		{"working directory and env", `pwd; echo "$PI_X"`, []string{"PI_X=set"}, dir + "\nset\n", 0},
		// A character split across two writes (and so two reads) arrives whole.
		{"utf-8 split", `printf '\303'; sleep 0.2; printf '\251\n'`, nil, "é\n", 0},
		{"invalid utf-8", `printf 'a\377b\n'`, nil, "a\ufffdb\n", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out collect
			code, err := PtyExec(context.Background(), tc.command, PtyExecOptions{Dir: dir, Env: tc.env, Cols: 100, Rows: 30, OnOutput: out.add})
			require.NoError(t, err)
			assert.Equal(t, tc.code, code)
			assert.Equal(t, tc.want, strings.ReplaceAll(out.text(), "\r\n", "\n"))
		})
	}
}

func TestPtyExecStreams(t *testing.T) {
	var out collect
	first := make(chan time.Time, 1)
	start := time.Now()
	_, err := PtyExec(context.Background(), `echo one; sleep 0.5; echo two`, PtyExecOptions{OnOutput: func(s string) {
		out.add(s)
		select {
		case first <- time.Now():
		default:
		}
	}})
	require.NoError(t, err)
	total := time.Since(start)
	got := <-first
	assert.Less(t, got.Sub(start), total-200*time.Millisecond, "the first line arrives before the command ends")
	assert.Equal(t, "one\r\ntwo\r\n", out.text())
}

func TestPtyExecCancelKillsTheGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			if b, err := os.ReadFile(pidFile); err == nil && len(b) > 0 && b[len(b)-1] == '\n' {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	_, err := PtyExec(ctx, `sleep 30 & echo $! > `+pidFile+`; wait`, PtyExecOptions{})
	require.ErrorIs(t, err, context.Canceled)
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	var pid int
	_, err = fmt.Sscan(strings.TrimSpace(string(b)), &pid)
	require.NoError(t, err)
	assert.Eventually(t, func() bool { return syscall.Kill(pid, 0) != nil }, 5*time.Second, 20*time.Millisecond, "sleep %d survived", pid)
}

// A background process that keeps the terminal open does not hold the call, and is
// killed with the rest of the group.
func TestPtyExecBackgroundDoesNotHold(t *testing.T) {
	start := time.Now()
	var out collect
	code, err := PtyExec(context.Background(), `sleep 30 & echo started`, PtyExecOptions{OnOutput: out.add})
	require.NoError(t, err)
	assert.Zero(t, code)
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.Equal(t, "started\r\n", out.text())
}

// TestPtyExecGitLogDoesNotPage: `git log` longer than the window, on a terminal, would
// start less and wait for keys; as a `!` command it prints the whole log and returns.
func TestPtyExecGitLogDoesNotPage(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	git("init", "-q")
	for i := 1; i <= 60; i++ {
		git("commit", "-q", "--allow-empty", "-m", fmt.Sprintf("commit-%02d", i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // bounds a hang only
	defer cancel()
	var out collect
	code, err := PtyExec(ctx, `git log --oneline`, PtyExecOptions{Dir: dir, Env: []string{"TERM=xterm", "PAGER=less", "GIT_PAGER=less"}, Rows: 10, OnOutput: out.add})
	require.NoError(t, err, "git log waited for a pager's keys")
	assert.Equal(t, 0, code)
	assert.Equal(t, 60, strings.Count(out.text(), "commit-"), out.text())
}

// TestPtyExecCoalesces: a flood of output reaches OnOutput in few large pieces, not in the
// terminal's few-KB reads (about 145 for these 589 KB), and whole.
func TestPtyExecCoalesces(t *testing.T) {
	var out collect
	_, err := PtyExec(context.Background(), `seq 1 100000`, PtyExecOptions{OnOutput: out.add})
	require.NoError(t, err)
	var want strings.Builder
	for i := 1; i <= 100000; i++ {
		fmt.Fprintf(&want, "%d\r\n", i)
	}
	assert.Equal(t, want.String(), out.text())
	out.mu.Lock()
	n := len(out.chunks)
	out.mu.Unlock()
	t.Logf("%d pieces for %d bytes", n, want.Len())
	assert.Less(t, n, 60, "pieces of up to 64 KB")
}
