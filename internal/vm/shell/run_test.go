package shell

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRun(t *testing.T) {
	tests := []struct {
		name  string
		argv  []string
		stdin string
		out   string
		code  int
	}{
		{"status", []string{"sh", "-c", "echo hi; exit 3"}, "", "hi\n", 3},
		{"signal is 128+n", []string{"sh", "-c", "kill -KILL $$"}, "", "", 137},
		{"stdin", []string{"cat"}, "typed\n", "typed\n", 0},
		{"argv is not shell-parsed", []string{"printf", "%s|", "a b", "$HOME"}, "", "a b|$HOME|", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			code, err := Run(context.Background(), tt.argv, RunOptions{Stdin: strings.NewReader(tt.stdin), Stdout: &out})
			require.NoError(t, err)
			assert.Equal(t, tt.code, code)
			assert.Equal(t, tt.out, out.String())
		})
	}
}

func TestRunCancelKillsGroup(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code, _ := Run(ctx, []string{"sh", "-c", "sleep 60 & echo $! > pid; echo started; wait"}, RunOptions{Dir: dir, Stdout: &out})
		done <- code
	}()
	for !fileExists(filepath.Join(dir, "pid")) {
		select {
		case code := <-done:
			t.Fatalf("ended early with %d: %s", code, out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	assert.Equal(t, 137, <-done)
	waitGone(t, readPid(t, filepath.Join(dir, "pid")))
}

func fileExists(path string) bool {
	b, err := os.ReadFile(path)
	return err == nil && len(b) > 0
}
