package deploy

import (
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"

	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// fakeSbx answers sbx invocations without starting anything and records each call's
// argv and how long its context had left.
type fakeSbx struct {
	mu    sync.Mutex
	calls []string
	left  []time.Duration
}

type done int

func (d done) Wait() (int, error) { return int(d), nil }

func (f *fakeSbx) Start(ctx context.Context, _ string, c sbx.Cmd) (sbx.Process, error) {
	dl, _ := ctx.Deadline()
	argv := strings.Join(c.Args, " ")
	f.mu.Lock()
	f.calls = append(f.calls, argv)
	f.left = append(f.left, time.Until(dl))
	f.mu.Unlock()
	out := ""
	switch {
	case strings.Contains(argv, " pi-sbx-realpath "):
		// every path is its own real path
		for i, a := range c.Args {
			if a == "pi-sbx-realpath" {
				out = strings.Join(c.Args[i+1:], "\n") + "\n"
			}
		}
	case strings.Contains(argv, " compose ") && strings.Contains(argv, " config "):
		out = `{"services":{}}`
	case strings.Contains(argv, " compose ") && strings.Contains(argv, " ps "):
		out = ""
	case strings.HasPrefix(argv, "ports "):
		out = "[]"
	}
	if c.Stdout != nil {
		io.WriteString(c.Stdout, out)
	}
	return done(0), nil
}

// TestTimeoutsByKind: every docker call has a timeout, the long one for pull, build,
// compose up and a foreground run.
func TestTimeoutsByKind(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "app"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "compose.yaml"), []byte("services: {}\n"), 0o644))
	no := false
	tests := []struct {
		tool string
		args any
		verb string // the docker subcommand whose call is checked
		want time.Duration
	}{
		{"docker_ps", map[string]any{}, " ps ", ShortTimeout},
		{"docker_logs", map[string]any{"id": "c"}, " logs ", ShortTimeout},
		{"docker_exec", map[string]any{"id": "c", "command": "true"}, " exec c ", ShortTimeout},
		{"docker_pull", map[string]any{"image": "busybox"}, " pull ", LongTimeout},
		{"docker_build", map[string]any{"context": "app", "tag": "a:1"}, " build ", LongTimeout},
		{"docker_run", map[string]any{"image": "busybox", "detach": &no}, " run ", LongTimeout},
		{"docker_compose", map[string]any{}, " up ", LongTimeout},
		{"docker_compose", map[string]any{}, " config ", ShortTimeout},
		{"docker_prune", map[string]any{}, " prune ", LongTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.tool+tt.verb, func(t *testing.T) {
			f := &fakeSbx{}
			d, err := New(Config{Sbx: &sbx.Client{Bin: "sbx", Runner: f}, Sandbox: func(context.Context) (string, error) { return "box", nil },
				Name: "box", Workspace: ws, Policy: sbx.EnvPolicy{}})
			require.NoError(t, err)
			raw, _ := json.Marshal(tt.args)
			res, err := d.CallTool(context.Background(), mcpserver.Call{Name: tt.tool, Args: raw})
			require.NoError(t, err)
			require.False(t, res.IsError, "%+v", res.Content)
			found := false
			for i, c := range f.calls {
				if strings.Contains(c, " -- docker -H "+Pin+" ") && strings.Contains(c+" ", tt.verb) {
					found = true
					assert.InDelta(t, tt.want.Seconds(), f.left[i].Seconds(), 5, c)
				}
			}
			assert.True(t, found, "no %q call in %q", tt.verb, f.calls)
		})
	}
}
