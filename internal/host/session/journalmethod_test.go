package session

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/review"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/journal"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/journal/recorder"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// journalAgent answers pi_sbx_journal as the VM's agent would, over a workspace that is
// a string: a checkpoint's tree is id(state); commits maps each commit to its state.
type journalAgent struct {
	mu      sync.Mutex
	state   string
	commits map[string]string
	ops     []tools.JournalArgs
}

func hexID(s string) string { return fmt.Sprintf("%040x", []byte(s))[:40] }

func (f *journalAgent) CallTool(_ context.Context, c mcpserver.Call) (json.RawMessage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var a tools.JournalArgs
	if err := json.Unmarshal(c.Args, &a); err != nil || c.Name != tools.JournalName {
		return nil, fmt.Errorf("bad call %s %s", c.Name, c.Args)
	}
	f.ops = append(f.ops, a)
	var details any
	switch a.Op {
	case "checkpoint":
		tree := hexID(f.state)
		if tree == a.ParentTree {
			details = map[string]any{"commit": a.Parent, "tree": tree, "changed": false}
		} else {
			commit := hexID(fmt.Sprint("commit", len(f.commits)))
			f.commits[commit] = f.state
			details = map[string]any{"commit": commit, "tree": tree, "changed": true}
		}
	case "restore":
		f.state = f.commits[a.Target]
	case "holders":
		details = map[string]any{"holders": []recorder.Holder{{PID: 7, Command: "sleep", Files: []string{"/w"}}}}
	}
	b, _ := json.Marshal(map[string]any{"content": []any{}, "structuredContent": details})
	return b, nil
}

// journalOf is a recorder whose journal has checkpoints of states s0, s1, ... (the
// workspace at the last one).
func journalOf(t *testing.T, states ...string) (*recorder.Recorder, *journalAgent) {
	t.Helper()
	agent := &journalAgent{commits: map[string]string{}}
	r := &recorder.Recorder{Journal: journal.Open(t.TempDir(), "box"), Agent: agent, Now: func() time.Time { return time.Unix(0, 0) }}
	for i, s := range states {
		agent.state = s
		if i == 0 {
			require.NoError(t, r.Start(context.Background()))
			continue
		}
		_, ok, err := r.Record(context.Background(), recorder.Call{Client: "pi", CallID: fmt.Sprint("toolu_", i), Tool: "write"})
		require.NoError(t, err)
		require.True(t, ok)
	}
	agent.ops = nil
	return r, agent
}

// callJSON calls route c with args and returns its text, structuredContent and isError.
func callJSON(t *testing.T, c mcpserver.Caller, name, args string, out any) (string, bool) {
	t.Helper()
	res := callTyped(t, c, mcpserver.Call{Name: name, Args: json.RawMessage(args), Client: "pi-sbx-extension"})
	r, err := mcpserver.FromMCP(res)
	require.NoError(t, err)
	if out != nil && r.Details != nil {
		require.NoError(t, json.Unmarshal(r.Details.(json.RawMessage), out))
	}
	return r.Content[0].Text, res.IsError
}

// TestJournalRoutesOutsideReviewMode: without a journal both methods say so in one line.
func TestJournalRoutesOutsideReviewMode(t *testing.T) {
	routes := JournalRoutes(nil, nil, "box", nil)
	require.Len(t, routes, 2)
	for _, rt := range routes {
		assert.True(t, rt.Unlisted, rt.Tool.Name)
		text, isErr := callJSON(t, rt.Caller, rt.Tool.Name, `{}`, nil)
		assert.True(t, isErr, rt.Tool.Name)
		assert.Equal(t, noJournal, text, rt.Tool.Name)
	}
}

// TestCallsRoute: pi_sbx_calls is review --calls: a line per checkpoint after the start
// (journal.Line), and as data each call's entry with its files and lines, and the last
// checkpoint's number.
func TestCallsRoute(t *testing.T) {
	c := work(t)
	j := journal.Open(t.TempDir(), c.Sandbox)
	collect := func(context.Context) (review.Changes, error) { return c, nil }
	route := JournalRoutes(&recorder.Recorder{Journal: j}, collect, c.Sandbox, os.Environ())[0]
	assert.Equal(t, tools.CallsName, route.Tool.Name)

	var got callsResult
	text, isErr := callJSON(t, route.Caller, tools.CallsName, `{}`, &got)
	assert.False(t, isErr)
	assert.Equal(t, "no call of h19l-s has changed the workspace yet\n", text)
	assert.Equal(t, callsResult{Sandbox: "h19l-s", Calls: []journal.Call{}}, got)

	start := journal.Entry{N: 0, Tool: journal.StartTool, Commit: c.Base, Tree: git(t, c.Root, "rev-parse", c.Base+"^{tree}")}
	one := journal.Entry{N: 1, Client: "pi", CallID: "toolu_1", Tool: "write", Args: map[string]string{"path": "a.txt"},
		Commit: c.Head, Tree: git(t, c.Root, "rev-parse", c.Head+"^{tree}"), Parent: c.Base, Time: time.Unix(5, 0).UTC()}
	require.NoError(t, j.Append(start))
	require.NoError(t, j.Append(one))
	got = callsResult{}
	text, isErr = callJSON(t, route.Caller, tools.CallsName, `{}`, &got)
	assert.False(t, isErr)
	assert.Equal(t, journal.Line(one, 2, 2, 1)+"\n", text, "a.txt a -> b, Makefile added")
	assert.Equal(t, callsResult{Sandbox: "h19l-s", At: 1, Start: &start, Calls: []journal.Call{{Entry: one, Files: 2, Added: 2, Removed: 1}}}, got)
}

// TestUndoRoute: pi_sbx_undo picks its checkpoint as undo does (to, last, default the
// last one), names the processes holding files, restores and records the undo as a
// checkpoint of the calling client; dry_run only says what it would do; a bad choice is
// one line, nothing restored.
func TestUndoRoute(t *testing.T) {
	for _, tc := range []struct {
		name, args string
		wantErr    string
		target     int
		state      string // the workspace after; "" unchanged (s3)
		checkpoint int
	}{
		{name: "default: the last one", args: `{}`, target: 2, state: "s2", checkpoint: 4},
		{name: "last 2", args: `{"last":2}`, target: 1, state: "s1", checkpoint: 4},
		{name: "to the start", args: `{"to":0}`, target: 0, state: "s0", checkpoint: 4},
		{name: "dry run", args: `{"to":1,"dry_run":true}`, target: 1},
		{name: "both", args: `{"to":1,"last":1}`, wantErr: "to and last exclude each other"},
		{name: "to past the end", args: `{"to":9}`, wantErr: "--to 9: the journal has checkpoints 0 to 3"},
		{name: "last too many", args: `{"last":4}`, wantErr: "--last 4: the journal has 3 checkpoint(s) after the start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, agent := journalOf(t, "s0", "s1", "s2", "s3")
			route := JournalRoutes(rec, nil, "box", nil)[1]
			assert.Equal(t, tools.UndoName, route.Tool.Name)
			var got undoResult
			text, isErr := callJSON(t, route.Caller, tools.UndoName, tc.args, &got)
			entries, err := rec.Journal.Entries()
			require.NoError(t, err)
			if tc.wantErr != "" {
				assert.True(t, isErr)
				assert.Equal(t, tc.wantErr, text)
				assert.Empty(t, agent.ops, "nothing asked of the sandbox")
				assert.Len(t, entries, 4)
				return
			}
			assert.False(t, isErr, text)
			warning := "warning: process 7 (sleep) holds /w in the workspace: it may change it again after the undo"
			assert.Equal(t, []string{warning}, got.Warnings)
			assert.Equal(t, tc.target, got.Target.N)
			if tc.state == "" {
				assert.False(t, got.Done)
				assert.Equal(t, "s3", agent.state, "a dry run restores nothing")
				assert.Len(t, entries, 4)
				assert.Equal(t, warning+"\nwould reset the workspace of box to checkpoint 1 (after write toolu_1)\n", text)
				return
			}
			assert.True(t, got.Done)
			assert.Equal(t, tc.state, agent.state)
			assert.Equal(t, tc.checkpoint, got.Checkpoint)
			require.Len(t, entries, 5)
			undo := entries[4]
			assert.Equal(t, "pi-sbx-extension", undo.Client)
			assert.Equal(t, "undo", undo.Tool)
			assert.Equal(t, map[string]string{"to": fmt.Sprint(tc.target)}, undo.Args)
			assert.Equal(t, warning+"\n"+journal.Undone("box", got.Target, undo)+"\n", text)
		})
	}
	t.Run("empty journal", func(t *testing.T) {
		rec, _ := journalOf(t)
		text, isErr := callJSON(t, JournalRoutes(rec, nil, "box", nil)[1].Caller, tools.UndoName, `{}`, nil)
		assert.True(t, isErr)
		assert.Equal(t, "sandbox box: the journal is empty: no call has changed the workspace", text)
	})
}
