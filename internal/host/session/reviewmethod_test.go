package session

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/review"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// work is a workspace with a.txt, and a sandbox's work that edits it and adds a Makefile.
func work(t *testing.T) review.Changes {
	ws, vm := filepath.Join(t.TempDir(), "ws"), filepath.Join(t.TempDir(), "vm")
	git(t, ".", "init", "-q", ws)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644))
	git(t, ws, "add", "-A")
	git(t, ws, "commit", "-qm", "start")
	git(t, ".", "clone", "-q", ws, vm)
	require.NoError(t, os.WriteFile(filepath.Join(vm, "a.txt"), []byte("b\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(vm, "Makefile"), []byte("all:\n"), 0o644))
	git(t, vm, "add", "-A")
	git(t, vm, "commit", "-qm", "work")
	git(t, ws, "fetch", "-q", vm, "HEAD:refs/pi-sbx/h19l-s/head")
	git(t, ws, "update-ref", "refs/pi-sbx/h19l-s/base", "HEAD")
	return review.Changes{GitDir: filepath.Join(ws, ".git"), Root: ws, Sandbox: "h19l-s", BaseRef: "refs/pi-sbx/h19l-s/base",
		Base: git(t, ws, "rev-parse", "HEAD"), Head: git(t, ws, "rev-parse", "refs/pi-sbx/h19l-s/head")}
}

func TestReviewRoute(t *testing.T) {
	ctx := context.Background()
	c := work(t)
	collect := func(context.Context) (review.Changes, error) {
		c.Base = git(t, c.Root, "rev-parse", c.BaseRef) // as the sandbox side reads it
		return c, nil
	}
	route := ReviewRoute(collect, os.Environ())
	assert.True(t, route.Unlisted)
	call := func(args string) (string, reviewResult, bool) {
		res := callTyped(t, route.Caller, mcpserver.Call{Name: "pi_sbx_review", Args: json.RawMessage(args)})
		r, err := mcpserver.FromMCP(res)
		require.NoError(t, err)
		var out reviewResult
		require.NoError(t, json.Unmarshal(r.Details.(json.RawMessage), &out))
		return r.Content[0].Text, out, res.IsError
	}

	text, st, isErr := call(`{"stat":true}`)
	assert.False(t, isErr)
	assert.Equal(t, "review: 2 files changed", st.Summary)
	require.Len(t, st.Files, 2)
	assert.Equal(t, "Makefile", st.Files[0].Path, "flagged first")
	assert.Equal(t, []string{"make runs it"}, st.Files[0].Risks)
	assert.Contains(t, text, "Runs on the host")
	assert.NotContains(t, text, "diff --git")

	assert.Equal(t, git(t, c.Root, "rev-parse", c.Head+"^{tree}"), st.Head, "the work is Head's tree")
	text, _, _ = call(`{}`)
	assert.Contains(t, text, "diff --git a/a.txt b/a.txt")

	// A host edit refuses the land: isError, each path in refused.
	require.NoError(t, os.WriteFile(filepath.Join(c.Root, "a.txt"), []byte("host\n"), 0o644))
	text, st, isErr = call(`{"land":true,"all":true}`)
	assert.True(t, isErr)
	assert.Equal(t, "nothing landed: a.txt: changed on the host since the sandbox started", text)
	assert.Equal(t, []review.Refusal{{Path: "a.txt", Why: "changed on the host since the sandbox started"}}, st.Refused)
	require.NoError(t, os.WriteFile(filepath.Join(c.Root, "a.txt"), []byte("a\n"), 0o644))

	_, err := route.Caller.CallTool(ctx, mcpserver.Call{Name: "pi_sbx_review", Args: json.RawMessage(`{"land":true,"all":true,"head":"0000000"}`)})
	assert.ErrorIs(t, err, review.ErrHeadMoved)
	text, st, isErr = call(`{"land":true,"all":true,"head":"` + st.Head + `"}`)
	assert.False(t, isErr, text)
	assert.Equal(t, []string{"a.txt"}, st.Landed)
	assert.Equal(t, []string{"Makefile"}, st.Held)
	assert.Equal(t, "review: 1 file changed", st.Summary, "what is left")
	assert.Contains(t, text, "wrote a.txt (2 bytes)\nlanded 1 change(s) from h19l-s; 1 left\n")
	b, err := os.ReadFile(filepath.Join(c.Root, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "b\n", string(b))
	assert.NoFileExists(t, filepath.Join(c.Root, "Makefile"))
}

func TestReviewTextIsCut(t *testing.T) {
	c := work(t)
	rc := &reviewCaller{collect: func(context.Context) (review.Changes, error) { return c, nil }, environ: os.Environ(), maxText: 200}
	res := callTyped(t, mcpserver.Typed(rc.call), mcpserver.Call{Name: "pi_sbx_review", Args: json.RawMessage(`{}`)})
	r, err := mcpserver.FromMCP(res)
	require.NoError(t, err)
	text := r.Content[0].Text
	assert.LessOrEqual(t, len(text), 200+120)
	assert.Regexp(t, `\n\[the review goes on for \d+ more bytes: pi-sbx-backend review --workspace .+ shows it all\]\n$`, text)
	assert.Equal(t, "abc\n", cut("abc\n", 4, "/w"))
	assert.Equal(t, "a\n[the review goes on for 2 more bytes: pi-sbx-backend review --workspace /w shows it all]\n", cut("a\nbc", 3, "/w"))
}

// callTyped calls c and decodes its result as the server's SDK path does.
func callTyped(t *testing.T, c mcpserver.Caller, call mcpserver.Call) *mcp.CallToolResult {
	t.Helper()
	raw, err := c.CallTool(context.Background(), call)
	require.NoError(t, err)
	var res mcp.CallToolResult
	require.NoError(t, json.Unmarshal(raw, &res))
	return &res
}

// TestReviewRouteHunks: list_hunks gives one file's hunks as data; land with hunks lands
// those alone, and hunk_base refuses a land numbered against a base that has moved.
func TestReviewRouteHunks(t *testing.T) {
	c := work(t)
	var oldText, newText strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&oldText, "%d\n", i)
		switch i {
		case 2, 28:
			fmt.Fprintf(&newText, "changed %d\n", i)
		default:
			fmt.Fprintf(&newText, "%d\n", i)
		}
	}
	// The base and the work gain n.txt: 30 lines, and two of them changed far apart.
	require.NoError(t, os.WriteFile(filepath.Join(c.Root, "n.txt"), []byte(oldText.String()), 0o644))
	git(t, c.Root, "add", "n.txt")
	git(t, c.Root, "commit", "-qm", "n")
	c.Base = git(t, c.Root, "rev-parse", "HEAD")
	git(t, c.Root, "update-ref", c.BaseRef, c.Base)
	vm := t.TempDir()
	git(t, ".", "clone", "-q", c.Root, vm)
	require.NoError(t, os.WriteFile(filepath.Join(vm, "n.txt"), []byte(newText.String()), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(vm, "new.txt"), []byte("new\n"), 0o644))
	git(t, vm, "add", "-A")
	git(t, vm, "commit", "-qm", "work")
	git(t, c.Root, "fetch", "-q", vm, "HEAD:refs/pi-sbx/h19l-s/head2")
	c.Head = git(t, c.Root, "rev-parse", "refs/pi-sbx/h19l-s/head2")

	collect := func(context.Context) (review.Changes, error) {
		c.Base = git(t, c.Root, "rev-parse", c.BaseRef)
		return c, nil
	}
	route := ReviewRoute(collect, os.Environ())
	call := func(args string) (string, reviewResult, error) {
		raw, err := route.Caller.CallTool(context.Background(), mcpserver.Call{Name: "pi_sbx_review", Args: json.RawMessage(args)})
		if err != nil {
			return "", reviewResult{}, err
		}
		var res mcp.CallToolResult
		require.NoError(t, json.Unmarshal(raw, &res))
		r, err := mcpserver.FromMCP(&res)
		require.NoError(t, err)
		var out reviewResult
		require.NoError(t, json.Unmarshal(r.Details.(json.RawMessage), &out))
		return r.Content[0].Text, out, nil
	}
	text, r, err := call(`{"paths":["n.txt"],"list_hunks":true}`)
	require.NoError(t, err)
	require.NotNil(t, r.Hunks)
	require.Len(t, r.Hunks.Hunks, 2)
	assert.Equal(t, "n.txt", r.Hunks.Path)
	assert.Contains(t, r.Hunks.Hunks[1].Text, "+changed 28\n")
	assert.Equal(t, 2, r.Hunks.Hunks[1].N)
	assert.Contains(t, text, "@@ [hunk 2]")
	base := r.Hunks.Base

	_, _, err = call(`{"paths":["a.txt","n.txt"],"list_hunks":true}`)
	assert.ErrorContains(t, err, "exactly one path")
	_, _, err = call(`{"paths":["new.txt"],"list_hunks":true}`)
	assert.ErrorContains(t, err, "new.txt is a new file")

	text, r, err = call(`{"land":true,"paths":["n.txt"],"hunks":[2],"hunk_base":"` + base + `"}`)
	require.NoError(t, err)
	assert.Contains(t, text, "landed 1 hunk(s) of n.txt; 1 of its hunks left\n")
	assert.Equal(t, 1, r.HunksLeft)
	assert.Equal(t, []string{"n.txt"}, r.Landed)
	b, err := os.ReadFile(filepath.Join(c.Root, "n.txt"))
	require.NoError(t, err)
	assert.Equal(t, strings.Replace(oldText.String(), "\n28\n", "\nchanged 28\n", 1), string(b))

	// Numbered against the old base: refused, nothing written.
	_, _, err = call(`{"land":true,"paths":["n.txt"],"hunks":[1],"hunk_base":"` + base + `"}`)
	assert.ErrorIs(t, err, review.ErrHunksMoved)
	b2, err := os.ReadFile(filepath.Join(c.Root, "n.txt"))
	require.NoError(t, err)
	assert.Equal(t, string(b), string(b2))
	_, r, err = call(`{"paths":["n.txt"],"list_hunks":true}`)
	require.NoError(t, err)
	require.Len(t, r.Hunks.Hunks, 1)
	assert.Contains(t, r.Hunks.Hunks[0].Text, "+changed 2\n")
}
