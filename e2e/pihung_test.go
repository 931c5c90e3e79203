//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hungServe writes a stand-in for pi-sbx-backend that never answers the MCP handshake
// (it reads nothing and writes nothing) and records its pid in the returned file.
func hungServe(t *testing.T) (bin, pidFile string) {
	dir := t.TempDir()
	bin, pidFile = filepath.Join(dir, "hung-serve"), filepath.Join(dir, "pid")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\necho $$ > "+pidFile+"\nexec sleep 100000\n"), 0o755))
	return bin, pidFile
}

// gone reports whether the process recorded in pidFile has ended.
func gone(t *testing.T, pidFile string) func() bool {
	return func() bool {
		b, err := os.ReadFile(pidFile)
		require.NoError(t, err)
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		require.NoError(t, err)
		return syscall.Kill(pid, 0) == syscall.ESRCH
	}
}

// TestPiHungServe: a serve that never answers the handshake is stopped after the bound
// (PI_SBX_HANDSHAKE_TIMEOUT, here 2 s) with a message in pi's status line saying what was
// waited for; pi then exits normally and leaves no serve behind. `pi -p` killed with
// SIGTERM while serve has not answered exits at once, its serve killed with it.
func TestPiHungServe(t *testing.T) {
	t.Run("TUI", func(t *testing.T) {
		w := newWorld(t)
		bin, pidFile := hungServe(t)
		p := startPiTUIWith(t, w, w.ws, "did not answer the MCP handshake within 2 s", "PI_SBX_BACKEND="+bin, "PI_SBX_HANDSHAKE_TIMEOUT=2")
		t.Logf("status:\n%s", p.screen)
		assert.Eventually(t, gone(t, pidFile), 5*time.Second, 20*time.Millisecond, "the hung serve was killed")
		p.tmux("send-keys", "-t", "t", "C-d")
		p.expect("PI-EXIT=0", 30*time.Second)
	})
	t.Run("pi -p, SIGTERM", func(t *testing.T) {
		root, node := piEnv(t)
		ext := filepath.Join(root, "extension")
		w := newWorld(t)
		bin, pidFile := hungServe(t)
		cmd := command(filepath.Join(ext, "node_modules/.bin/pi"),
			w.env("HOME="+t.TempDir(), "PI_SBX_BACKEND="+bin, "PATH="+filepath.Dir(node)+":"+os.Getenv("PATH")),
			"-p", "--provider", "faux", "--model", "scripted", "-e", ext, "-e", filepath.Join(ext, "test/faux-provider.ts"), "go")
		cmd.Dir = w.ws
		var stderr strings.Builder
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		require.Eventually(t, func() bool { _, err := os.Stat(pidFile); return err == nil }, 30*time.Second, 20*time.Millisecond, "serve started")
		time.Sleep(200 * time.Millisecond) // let the pidfile's write finish
		require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			t.Logf("pi -p after SIGTERM: %v; stderr:\n%s", err, stderr.String())
		case <-time.After(20 * time.Second): // below the 30 s handshake bound: SIGTERM, not the bound, ended it
			_ = cmd.Process.Kill()
			t.Fatalf("pi -p did not exit on SIGTERM; stderr:\n%s", stderr.String())
		}
		assert.Eventually(t, gone(t, pidFile), 5*time.Second, 20*time.Millisecond, "no serve left behind")
	})
}
