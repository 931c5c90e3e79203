package shell

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
)

func bash(t *testing.T, command string, o BashOptions) (result.Result, error) {
	t.Helper()
	if o.TempDir == "" {
		o.TempDir = t.TempDir()
	}
	return Bash(context.Background(), t.TempDir(), BashArgs{Command: command}, o)
}

func text(t *testing.T, r result.Result) string {
	t.Helper()
	require.Len(t, r.Content, 1)
	return r.Content[0].Text
}

func TestBashResults(t *testing.T) {
	tests := []struct {
		name    string
		command string
		want    string
		isError bool
	}{
		{"output", "echo hello", "hello\n", false},
		{"no output", "true", "(no output)", false},
		{"exit code", "echo hi; exit 3", "hi\n\n\nCommand exited with code 3", true},
		{"exit code without output", "exit 7", "(no output)\n\nCommand exited with code 7", true},
		{"signal death is 128+n", "kill -TERM $$", "(no output)\n\nCommand exited with code 143", true},
		{"stderr interleaved in order", "echo a; echo b >&2; echo c; echo d >&2", "a\nb\nc\nd\n", false},
		{"stdout and stderr are one pipe", "[ /proc/$$/fd/1 -ef /proc/$$/fd/2 ] && echo one-pipe", "one-pipe\n", false},
		{"stdin is /dev/null", "cat; readlink /proc/self/fd/0", "/dev/null\n", false},
		{"not a terminal", "test -t 0 || test -t 1 || echo none", "none\n", false},
		{"own process group", `test "$(cut -d' ' -f5 /proc/$$/stat)" = "$$" && echo leader`, "leader\n", false},
		{"bash -c", `echo "${BASH_VERSION:+bash}" "$0"`, "bash /bin/bash\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := bash(t, tt.command, BashOptions{})
			require.NoError(t, err)
			assert.Equal(t, tt.want, text(t, r))
			assert.Equal(t, tt.isError, r.IsError)
			assert.Nil(t, r.Details)
			// The exit code, also as data: 0 for a success, pi's number otherwise.
			want := 0
			if tt.isError {
				_, err := fmt.Sscanf(tt.want[strings.LastIndex(tt.want, "code ")+5:], "%d", &want)
				require.NoError(t, err)
			}
			assert.Equal(t, result.Exited(want), r.Outcome)
		})
	}
}

// The command gets the process's environment plus the caller's variables, a later
// KEY winning — except pi's session variables, which pi never passes on from its own
// environment.
func TestBashEnvironment(t *testing.T) {
	t.Setenv("PI_SBX_TEST_BASE", "from-process")
	t.Setenv("PI_SBX_TEST_OVERRIDE", "old")
	t.Setenv("PI_MODEL", "stale")
	t.Setenv("PI_SESSION_ID", "stale")
	r, err := bash(t, `echo "$PI_SBX_TEST_BASE $PI_SBX_TEST_OVERRIDE $PI_MODEL ${PI_SESSION_ID-unset}"`, BashOptions{
		Env: []string{"PI_SBX_TEST_OVERRIDE=new", "PI_MODEL=m1"},
	})
	require.NoError(t, err)
	assert.Equal(t, "from-process new m1 unset\n", text(t, r))
}

func TestBashThrown(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	missing := filepath.Join(t.TempDir(), "gone")
	tests := []struct {
		name    string
		cwd     string
		timeout *float64
		want    string
	}{
		{"zero timeout", "", f(0), "Invalid timeout: must be a finite number of seconds"},
		{"negative timeout", "", f(-1), "Invalid timeout: must be a finite number of seconds"},
		{"huge timeout", "", f(2147484), "Invalid timeout: maximum is 2147483.647 seconds"},
		{"missing cwd", missing, nil, "Working directory does not exist: " + missing + "\nCannot execute bash commands."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cwd := tt.cwd
			if cwd == "" {
				cwd = t.TempDir()
			}
			_, err := Bash(context.Background(), cwd, BashArgs{Command: "echo no", Timeout: tt.timeout}, BashOptions{})
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

// A background process that keeps the pipe open must not hold the call: it ends once
// the shell has exited and the pipe has been quiet for the grace period.
func TestBashBackgroundChildDoesNotHang(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	r, err := Bash(context.Background(), dir, BashArgs{Command: "sleep 30 & echo $! > pid; echo started"}, BashOptions{})
	require.NoError(t, err)
	assert.Equal(t, "started\n", text(t, r))
	assert.Less(t, time.Since(start), 20*time.Second, "waited for the background child")
	killPidFile(t, filepath.Join(dir, "pid"))
}

// Output that keeps arriving after the shell exited is still collected: the job below
// starts writing once the shell has exited and goes on for longer than the exit grace,
// each line re-arming it. The grace is 1 s here and the lines 0.3 s apart, so that a
// loaded machine's scheduling pauses (tenths of a second) cannot end the call early.
func TestBashGraceReArmedPerChunk(t *testing.T) {
	r, err := bash(t, `(while kill -0 $$ 2>/dev/null; do :; done; for i in 1 2 3 4 5; do echo late$i; sleep 0.3; done) & echo go`,
		BashOptions{exitStdioGrace: time.Second})
	require.NoError(t, err)
	assert.Equal(t, "go\nlate1\nlate2\nlate3\nlate4\nlate5\n", text(t, r))
}

func TestBashTimeoutKillsGroup(t *testing.T) {
	dir := t.TempDir()
	secs := 0.3
	_, err := Bash(context.Background(), dir, BashArgs{Command: "sleep 60 & echo $! > pid; echo waiting; wait", Timeout: &secs}, BashOptions{})
	require.Error(t, err)
	assert.Equal(t, "waiting\n\n\nCommand timed out after 0.3 seconds", err.Error())
	waitGone(t, readPid(t, filepath.Join(dir, "pid")))
}

// A background job that holds the pipe after the shell exited is killed by the timeout,
// and the message says the shell had exited. The pipe stays quiet (the grace is made
// longer than the test), so only the timeout can end the call.
func TestBashTimeoutAfterShellExited(t *testing.T) {
	secs := 2.0
	_, err := Bash(context.Background(), t.TempDir(), BashArgs{
		Command: "(echo x; exec sleep 60) & exit 4", Timeout: &secs,
	}, BashOptions{TempDir: t.TempDir(), exitStdioGrace: time.Minute})
	require.Error(t, err)
	assert.Regexp(t, regexp.MustCompile(`^x\n\n\nCommand timed out after 2 seconds\. The shell exited with code 4 after \d+(\.\d)? seconds, but background processes it started kept writing output until the timeout\.$`), err.Error())
}

func TestBashAbort(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	onUpdate := func(r result.Result) {
		if len(r.Content) == 1 && strings.Contains(r.Content[0].Text, "running") {
			once.Do(cancel)
		}
	}
	_, err := Bash(ctx, dir, BashArgs{Command: "sleep 60 & echo $! > pid; echo running; wait"}, BashOptions{OnUpdate: onUpdate})
	require.Error(t, err)
	assert.Equal(t, "running\n\n\nCommand aborted", err.Error())
	waitGone(t, readPid(t, filepath.Join(dir, "pid")))

	_, err = Bash(ctx, dir, BashArgs{Command: "echo never"}, BashOptions{})
	require.Error(t, err)
	assert.Equal(t, "Command aborted", err.Error(), "already-cancelled context")
}

func TestBashUpdates(t *testing.T) {
	var (
		mu    sync.Mutex
		got   []result.Result
		times []time.Time
	)
	onUpdate := func(r result.Result) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r)
		times = append(times, time.Now())
	}
	start := time.Now()
	r, err := bash(t, "for i in $(seq 1 10); do echo line$i; sleep 0.03; done", BashOptions{OnUpdate: onUpdate})
	elapsed := time.Since(start)
	require.NoError(t, err)
	require.Equal(t, "line9\nline10\n", text(t, r)[len(text(t, r))-len("line9\nline10\n"):])
	require.GreaterOrEqual(t, len(got), 3)
	assert.Equal(t, result.Result{Content: []result.Content{}}, got[0], "first update is pi's empty one")
	// Throttled to one update per 100 ms (the first at once, then at 100, 200 … ms),
	// plus pi's empty first one and the final one sent as the command ends. A slow
	// machine only loosens this bound; ten chunks sent unthrottled would exceed it.
	assert.LessOrEqual(t, len(got), int(elapsed/(100*time.Millisecond))+3, "%d updates in %v", len(got), elapsed)
	last := got[len(got)-1]
	assert.Equal(t, text(t, r), last.Content[0].Text, "the last update carries the final output")
	assert.Equal(t, BashDetails{}, last.Details)
}

func TestBashTruncatedUpdateCarriesFile(t *testing.T) {
	var last result.Result
	r, err := bash(t, "seq 1 3000", BashOptions{OnUpdate: func(r result.Result) { last = r }})
	require.NoError(t, err)
	d, ok := last.Details.(BashDetails)
	require.True(t, ok)
	require.NotNil(t, d.Truncation)
	assert.Equal(t, r.Details.(BashDetails).FullOutputPath, d.FullOutputPath)
}

func TestBashFullOutputFile(t *testing.T) {
	tmp := t.TempDir()
	r, err := bash(t, "seq 1 3000", BashOptions{TempDir: tmp})
	require.NoError(t, err)
	d, ok := r.Details.(BashDetails)
	require.True(t, ok)
	assert.Regexp(t, `^`+regexp.QuoteMeta(tmp)+`/pi-bash-[0-9a-f]{16}\.log$`, d.FullOutputPath)
	assert.True(t, strings.HasSuffix(text(t, r), "\n\n[Showing lines 1001-3000 of 3000. Full output: "+d.FullOutputPath+"]"))
	st, err := os.Stat(d.FullOutputPath)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	full, err := os.ReadFile(d.FullOutputPath)
	require.NoError(t, err)
	var want strings.Builder
	for i := 1; i <= 3000; i++ {
		want.WriteString(strconv.Itoa(i) + "\n")
	}
	assert.Equal(t, want.String(), string(full))
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return pid
}

func killPidFile(t *testing.T, path string) {
	_ = syscall.Kill(readPid(t, path), syscall.SIGKILL)
}

// waitGone waits until pid no longer runs (a zombie counts as gone), failing after a
// generous deadline: the kill is asynchronous, the assertion is only that it happens.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d still running: %s", pid, stat)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestBashProgress(t *testing.T) {
	tests := []struct {
		name    string
		command string
		total   int
		whole   bool // the texts add up to the whole output
	}{
		{"small, over time", "for i in 1 2 3 4 5; do echo line$i; sleep 0.04; done", 30, true},
		{"large", "seq 1 200000", 1288895, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []Progress
			r, err := bash(t, tt.command, BashOptions{OnProgress: func(p Progress) { got = append(got, p) }})
			require.NoError(t, err)
			require.NotEmpty(t, got)
			var all strings.Builder
			prev := 0
			for _, p := range got {
				assert.LessOrEqual(t, len(p.Text), progressMax)
				assert.Greater(t, p.Bytes, prev, "progress without new output")
				prev = p.Bytes
				all.WriteString(p.Text)
			}
			assert.Equal(t, tt.total, got[len(got)-1].Bytes)
			out := text(t, r)
			if tt.whole {
				assert.Equal(t, out, all.String())
			} else {
				tail := strings.Split(out, "\n\n[Showing")[0]
				assert.True(t, strings.HasSuffix(all.String(), tail+"\n"), "the progress texts end with the output's tail")
			}
		})
	}
}
