//go:build e2e

package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
)

// Files without end given as grep's path: a symlink to /dev/zero. pi's rg reads it for
// ever with flat memory, so pi's call never returns (checked here for a few seconds). We
// read at most fileio.StreamCap of such a file and then fail with an error naming it —
// a deliberate difference (docs/conformance.md): an answer instead of a hang, and never
// the whole-file load that grew our agent to 24 GB. Ours runs under an address-space
// limit, so a regression fails instead of exhausting the machine.
//
// A FIFO with an end is searched as pi searches it.

// boundedAddressSpace is RLIMIT_AS for our side (a Go program reserves ~1.2 GB at start).
const boundedAddressSpace = 3 << 30

func TestEndlessFileGrep(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "zero")))
	call := Call{Tool: "grep", Cwd: dir, Args: map[string]any{"pattern": "x", "path": "zero"}}

	answered := oracleWithin(t, call, 3*time.Second)
	assert.False(t, answered, "pi's grep of /dev/zero answered: the difference documented in docs/conformance.md is gone")

	got := localBounded(t, call)
	assert.True(t, got.IsError)
	require.Len(t, got.Content, 1)
	assert.Equal(t, filepath.Join(dir, "zero")+" is not a regular file and did not end within its first 32 MB: a device, FIFO or socket is read at most that far", got.Content[0].Text)
}

func TestFiniteFIFOGrepMatchesPi(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	content := []byte("needle one\nhay\nneedle two\n")
	call := Call{Tool: "grep", Cwd: dir, Args: map[string]any{"pattern": "needle", "path": "fifo"}}

	feedOnce(t, fifo, content)
	want := oracle(t, []Call{call})[0]
	feedOnce(t, fifo, content)
	got := localBounded(t, call)
	assert.Equal(t, want, got)
}

// feedOnce writes content to the FIFO for its next reader, then closes it.
func feedOnce(t *testing.T, fifo string, content []byte) {
	t.Helper()
	t.Cleanup(func() { // a writer still waiting for its reader is released
		if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		f.Write(content)
	}()
}

// oracleWithin runs pi on call and reports whether it answered within d; a call that
// has not is killed (with its rg, in the same process group).
func oracleWithin(t *testing.T, call Call, d time.Duration) bool {
	t.Helper()
	in, err := json.Marshal([]Call{call})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodePath(t), filepath.Join(repoRoot(), "conformance", "oracle.mjs"))
	cmd.Env = append(os.Environ(), "PI_MODULE="+piModulePath(t), "PI_OFFLINE=1")
	cmd.Stdin = bytes.NewReader(in)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.Output()
	return err == nil && len(out) > 0
}

// localBounded is local under RLIMIT_AS (prlimit).
func localBounded(t *testing.T, c Call) result.Result {
	t.Helper()
	args, err := json.Marshal(c.Args)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "prlimit", "--as="+strconv.Itoa(boundedAddressSpace), binPath, "tool", "--local", "--cwd", c.Cwd, c.Tool, string(args))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "tool --local %s %s: %s", c.Tool, args, stderr.String())
	r, err := result.Decode(out)
	require.NoError(t, err, "tool --local output %q", out)
	return r
}
