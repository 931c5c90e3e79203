//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
)

// TestTwoServesShareOneSandbox: a pi session's serve makes its sandbox; an editor's serve
// joins it (DOCKER_SANDBOX=its name, as pi_sbx_status's shell line says). Both edit one
// file 100 times at once, each its own lines: nothing is lost. Then the creator exits:
// its teardown sees the editor's lease and leaves the sandbox, and the editor's calls
// keep working (a process it started there is still running); docker_sandbox_rm refuses
// to remove a sandbox another session holds. When the editor exits
// too, the creator's watchdog removes the sandbox.
func TestTwoServesShareOneSandbox(t *testing.T) {
	w := newWorld(t)
	const n = 100
	var lines []string
	for i := 0; i < n; i++ {
		lines = append(lines, fmt.Sprintf("a%03d todo", i), fmt.Sprintf("b%03d todo", i))
	}
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "shared.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644))

	creator, creatorCmd, _ := w.serve(nil, []string{"--workspace", w.ws})
	assert.False(t, call(t, creator, "bash", `{"command":"echo up"}`).IsError)
	boxes := w.sandboxes()
	require.Len(t, boxes, 1)
	box := boxes[0]
	editor, _, editorErr := w.serve(nil, []string{"--workspace", w.ws}, "DOCKER_SANDBOX="+box)
	started := call(t, editor, "bash", `{"command":"sleep 1000 >/dev/null 2>&1 & echo $! > /tmp/h20c-sleep.pid; echo started"}`)
	require.False(t, started.IsError, text(started))

	// Each client keeps 8 edits in flight, the two at once.
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for side, cs := range map[string]*mcp.ClientSession{"a": creator, "b": editor} {
		slots := make(chan struct{}, 8)
		for i := 0; i < n; i++ {
			args := fmt.Sprintf(`{"path":"shared.txt","edits":[{"oldText":"%s%03d todo","newText":"%s%03d done"}]}`, side, i, side, i)
			wg.Add(1)
			slots <- struct{}{}
			go func() {
				defer func() { <-slots; wg.Done() }()
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "edit", Arguments: json.RawMessage(args)})
				switch {
				case err != nil:
					errs <- err
				case res.IsError:
					errs <- fmt.Errorf("edit %s: %s", args, text(res))
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	got, err := w.readWS(filepath.Join(w.ws, "shared.txt"))
	require.NoError(t, err)
	want := strings.ReplaceAll(strings.Join(lines, "\n")+"\n", "todo", "done")
	require.Equal(t, want, string(got), "2x%d concurrent edits of one file: every one is there", n)

	// The editor's model cannot pull the sandbox from under the pi session either.
	rm := call(t, editor, "docker_sandbox_rm", `{}`)
	require.True(t, rm.IsError, text(rm))
	assert.Contains(t, text(rm), fmt.Sprintf("sandbox %s is in use by pid %d (serve) too: not removed", box, creatorCmd.Process.Pid))
	assert.Equal(t, []string{box}, w.sandboxes())

	// The creator ends as a client ends it: stdin closed, orderly teardown.
	require.NoError(t, creator.Close())
	creatorCmd.Wait()
	assert.Equal(t, []string{box}, w.sandboxes(), "removed while the editor's serve uses it")
	res := call(t, editor, "bash", `{"command":"kill -0 $(cat /tmp/h20c-sleep.pid) && echo still-running; grep -c done shared.txt"}`)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, fmt.Sprintf("still-running\n%d\n", 2*n), text(res), "the editor's serve keeps working, and what it started runs on")
	res = call(t, editor, "write", `{"path":"after.txt","content":"editor still here\n"}`)
	require.False(t, res.IsError, text(res))

	// The last holder leaves: the creator's watchdog removes the sandbox.
	require.NoError(t, editor.Close())
	require.Eventually(t, func() bool { return len(w.sandboxes()) == 0 }, 30*time.Second, 100*time.Millisecond,
		"the creator's watchdog removes the sandbox once the editor is gone; editor's stderr: %s", editorErr)
}

// TestShellHoldsTheSandboxUntilItDies: `pi-sbx-backend shell` joins a serve's session
// sandbox; the serve exits and leaves it to the shell, which keeps working; the shell is
// then killed (kill -9, no orderly end): its lease counts for nothing any more, and the
// serve's watchdog removes the sandbox.
func TestShellHoldsTheSandboxUntilItDies(t *testing.T) {
	w := newWorld(t)
	creator, _, _ := w.serve(nil, []string{"--workspace", w.ws})
	assert.False(t, call(t, creator, "bash", `{"command":"echo up"}`).IsError)
	boxes := w.sandboxes()
	require.Len(t, boxes, 1)
	box := boxes[0]

	shell := exec.Command(backendBin, "shell", "--workspace", w.ws)
	shell.Env = w.env("DOCKER_SANDBOX=" + box)
	in, err := shell.StdinPipe()
	require.NoError(t, err)
	out := &testbin.SyncBuffer{}
	shell.Stdout, shell.Stderr = out, out
	require.NoError(t, shell.Start())
	t.Cleanup(func() { in.Close(); shell.Process.Kill(); shell.Wait() })
	say := func(line, want string) {
		t.Helper()
		_, err := io.WriteString(in, line+"\n")
		require.NoError(t, err)
		require.Eventually(t, func() bool { return strings.Contains(out.String(), want) }, 30*time.Second, 20*time.Millisecond,
			"shell output: %s", out)
	}
	say("echo joined-$((1+1))", "joined-2")

	require.NoError(t, creator.Close())
	assert.Equal(t, []string{box}, w.sandboxes(), "removed while the shell uses it")
	say("echo still-$((2+1))", "still-3")

	require.NoError(t, shell.Process.Kill())
	shell.Wait()
	require.Eventually(t, func() bool { return len(w.sandboxes()) == 0 }, 30*time.Second, 100*time.Millisecond,
		"a killed holder's lease does not pin the sandbox: the watchdog removes it")
}
