//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInterruptedLargeWritesLoseNothing: 30 MB writes of a file through serve,
// cancelled by the client or cut by killing the agent at moments from "still being
// sent" to "being written": every time the file holds either its old content or the
// whole new one, never a part, nothing else is left in the directory, and the next call
// works (after a kill, on a new agent).
func TestInterruptedLargeWritesLoseNothing(t *testing.T) {
	w := newWorld(t)
	c := rawServe(t, w, w.ws)
	call := func(ctx context.Context, name, args string) (string, error) {
		raw, err := c.CallTool(ctx, name, json.RawMessage(args), nil, "")
		return string(raw), err
	}
	_, err := call(context.Background(), "write", `{"path":"big.txt","content":"old\n"}`)
	require.NoError(t, err)

	for i, at := range []time.Duration{0, 5, 20, 60, 120, 200, 300, 450} {
		kill := i%2 == 1
		t.Run(fmt.Sprintf("%s after %dms", map[bool]string{true: "kill", false: "cancel"}[kill], at), func(t *testing.T) {
			before, err := os.ReadFile(filepath.Join(w.ws, "big.txt"))
			require.NoError(t, err)
			line := fmt.Sprintf("round %d: %s\n", i, strings.Repeat("x\ty \"z\" ", 6))
			content := strings.Repeat(line, (30<<20)/len(line))
			lit, _ := json.Marshal(content)
			agent := findAgent(t, w)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			time.AfterFunc(at*time.Millisecond, func() {
				if kill {
					_ = syscall.Kill(agent, syscall.SIGKILL)
				} else {
					cancel()
				}
			})
			res, callErr := call(ctx, "write", `{"path":"big.txt","content":`+string(lit)+`}`)
			// A cancelled call may still finish in the VM a moment later: look once the
			// file has stayed the same for a while.
			settle(t, filepath.Join(w.ws, "big.txt"))
			got, err := os.ReadFile(filepath.Join(w.ws, "big.txt"))
			require.NoError(t, err)
			switch {
			case bytes.Equal(got, before):
				t.Logf("the old content (call: %v %.120s)", callErr, res)
			case string(got) == content:
				t.Logf("the new content (call: %v %.120s)", callErr, res)
			default:
				t.Fatalf("big.txt holds %d bytes, neither the old %d nor the new %d (call: %v %.200s)", len(got), len(before), len(content), callErr, res)
			}
			if callErr == nil && !strings.Contains(res, `"isError":true`) {
				assert.Equal(t, content, string(got), "a write reported done is on disk whole")
			}
			// Nor is anything left beside it: the content is written to a file without
			// a name, named only to be renamed over big.txt a moment later.
			ents, err := os.ReadDir(w.ws)
			require.NoError(t, err)
			for _, e := range ents {
				assert.NotContains(t, e.Name(), ".pi-sbx-", "a temporary file is left behind")
			}
			out, err := call(context.Background(), "read", `{"path":"big.txt","limit":1}`)
			require.NoError(t, err, "the next call works")
			var r struct{ Content []struct{ Text string } }
			require.NoError(t, json.Unmarshal([]byte(out), &r))
			require.NotEmpty(t, r.Content)
			assert.True(t, strings.HasPrefix(r.Content[0].Text, strings.SplitN(string(got), "\n", 2)[0]), "%.100s", r.Content[0].Text)
		})
	}
}

// settle waits until the file at path (its inode, size and time) has not changed for
// half a second.
func settle(t *testing.T, path string) {
	t.Helper()
	var last os.FileInfo
	stable := 0
	for deadline := time.Now().Add(20 * time.Second); stable < 5; time.Sleep(100 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "%s keeps changing", path)
		fi, err := os.Stat(path)
		require.NoError(t, err)
		if last != nil && os.SameFile(fi, last) && fi.Size() == last.Size() && fi.ModTime().Equal(last.ModTime()) {
			stable++
		} else {
			stable = 0
		}
		last = fi
	}
}
