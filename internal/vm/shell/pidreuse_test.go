//go:build e2e

package shell

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Once the shell has exited and been reaped its pid is free, and a timeout that finds
// its group empty must not fall back to killing that pid: another process may have it.
// The test runs itself in a PID namespace of its own, where it can steer the next pid
// (ns_last_pid) to hand the shell's number to an innocent process, and checks that the
// timeout spares it.
func TestBashTimeoutSparesAReusedPid(t *testing.T) {
	if os.Getenv("PI_SBX_TEST_PIDNS") != "1" {
		cmd := exec.Command("unshare", "--pid", "--fork", "--mount-proc", os.Args[0],
			"-test.run=^TestBashTimeoutSparesAReusedPid$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "PI_SBX_TEST_PIDNS=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		t.Logf("%s", out)
		return
	}
	dir := t.TempDir()
	// The writer leaves the shell's group (setsid) and holds the pipe open, quiet, past
	// the timeout; the shell exits at once, leaving its group empty. The call waits for
	// the pipe to close (a quiet pipe would end it after exitStdioGrace, which depends
	// on the scheduler, so the grace is made longer than the test), and the writer's
	// exit closes it.
	command := `mkfifo f; setsid bash -c 'echo $$ > writer; exec 9<>f; read -t 8 -u 9' & echo $$ > shell; exit 0`
	secs := 5.0
	done := make(chan error, 1)
	go func() {
		_, err := Bash(context.Background(), dir, BashArgs{Command: command, Timeout: &secs},
			BashOptions{TempDir: t.TempDir(), exitStdioGrace: time.Minute})
		done <- err
	}()
	start := time.Now()
	shellPid := waitPidFile(t, filepath.Join(dir, "shell"))
	writerPid := waitPidFile(t, filepath.Join(dir, "writer")) // out of the group by now
	t.Logf("shell %d, writer %d at %v", shellPid, writerPid, time.Since(start))
	defer func() { _ = syscall.Kill(-writerPid, syscall.SIGKILL) }()
	for deadline := time.Now().Add(5 * time.Second); ; {
		if _, err := os.Stat("/proc/" + strconv.Itoa(shellPid)); os.IsNotExist(err) {
			break // reaped
		}
		require.True(t, time.Now().Before(deadline), "the shell was not reaped")
		time.Sleep(5 * time.Millisecond)
	}
	var innocent *exec.Cmd
	for range 50 {
		require.NoError(t, os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(shellPid-1)), 0))
		c := exec.Command("sleep", "600")
		require.NoError(t, c.Start())
		if c.Process.Pid == shellPid {
			innocent = c
			break
		}
		_ = c.Process.Kill()
		_ = c.Wait()
		time.Sleep(10 * time.Millisecond) // the number may still be in use a moment
	}
	require.NotNil(t, innocent, "could not give the shell's pid to another process")
	t.Logf("innocent at %v", time.Since(start))
	// Before the timeout, or the test proves nothing; 5 s is far beyond the ~0.6 s
	// this takes on a loaded CI machine.
	require.Less(t, time.Since(start), time.Duration(secs*float64(time.Second)), "the pid was reused only after the timeout")
	exited := make(chan struct{})
	go func() { _ = innocent.Wait(); close(exited) }()
	defer func() { _ = innocent.Process.Kill(); <-exited }()

	err := <-done
	t.Logf("bash returned at %v", time.Since(start))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Command timed out after 5 seconds")
	select {
	case <-exited:
		t.Fatal("the timeout killed the process that now has the shell's old pid")
	case <-time.After(200 * time.Millisecond):
	}
}

func waitPidFile(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 && b[len(b)-1] == '\n' {
			pid, err := strconv.Atoi(string(trimNL(b)))
			require.NoError(t, err)
			return pid
		}
	}
	t.Fatalf("%s never written", path)
	return 0
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == '\n' {
		b = b[:len(b)-1]
	}
	return b
}
