package recorder

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/journal"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// fakeAgent answers pi_sbx_journal as the VM's agent would, over a workspace that is a
// string: a checkpoint's tree is the state, its commit "c<n>".
type fakeAgent struct {
	mu    sync.Mutex
	state string // the workspace
	calls []tools.JournalArgs
	n     int
}

func id(s string) string { return fmt.Sprintf("%040x", []byte(s))[:40] }

func (f *fakeAgent) CallTool(_ context.Context, c mcpserver.Call) (json.RawMessage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var a tools.JournalArgs
	if err := json.Unmarshal(c.Args, &a); err != nil || c.Name != tools.JournalName {
		return nil, fmt.Errorf("bad call %s %s", c.Name, c.Args)
	}
	f.calls = append(f.calls, a)
	var details any
	switch a.Op {
	case "checkpoint":
		tree := id(f.state)
		if tree == a.ParentTree {
			details = map[string]any{"commit": a.Parent, "tree": tree, "changed": false}
		} else {
			f.n++
			details = map[string]any{"commit": id(fmt.Sprint("commit", f.n)), "tree": tree, "changed": true}
		}
	case "restore":
		f.state = a.Target // the tests restore commits named after states
	case "holders":
		details = map[string]any{"holders": []Holder{{PID: 7, Command: "sleep", Files: []string{"/w"}}}}
	}
	b, _ := json.Marshal(map[string]any{"content": []any{}, "structuredContent": details})
	return b, nil
}

// fakeTool changes the fake workspace as a call would.
type fakeTool struct {
	agent *fakeAgent
	to    string // the state after the call; "" leaves it
}

func (t fakeTool) CallTool(context.Context, mcpserver.Call) (json.RawMessage, error) {
	if t.to != "" {
		t.agent.mu.Lock()
		t.agent.state = t.to
		t.agent.mu.Unlock()
	}
	return json.RawMessage(`{"content":[]}`), nil
}

// TestRecorderRoutes: the changing tools' calls are checkpoints (the first preceded by
// checkpoint 0), recorded with the client, the call id, the tool and its arguments'
// short form; a read-only tool is never wrapped, and a call that changed nothing
// records nothing; a write names its file, resolved against the working directory.
func TestRecorderRoutes(t *testing.T) {
	agent := &fakeAgent{state: "start"}
	j := journal.Open(t.TempDir(), "box")
	r := &Recorder{Journal: j, VM: journal.VMFor("box", "/w", true), Agent: agent, Cwd: "/w/sub", Now: func() time.Time { return time.Unix(1, 0) }}
	route := func(name, to string) mcpserver.Route {
		return mcpserver.Route{Tool: &tools.Tool{Name: name}, Caller: fakeTool{agent: agent, to: to}}
	}
	routes := r.Routes([]mcpserver.Route{route("write", "s1"), route("read", ""), route("bash", "s2"), route("edit", "")}, func(err error) { t.Error(err) })
	_, isRead := routes[1].Caller.(fakeTool)
	assert.True(t, isRead, "read is not wrapped")

	for _, c := range []struct {
		route int
		id    string
		args  string
	}{
		{0, "w1", `{"path":"a.txt","content":"secret"}`},
		{1, "r1", `{"path":"a.txt"}`},
		{2, "b1", `{"command":"make"}`},
		{3, "e1", `{"path":"/w/b.txt","edits":[]}`}, // changes nothing
	} {
		_, err := routes[c.route].Caller.CallTool(context.Background(), mcpserver.Call{Name: routes[c.route].Tool.Name, Args: json.RawMessage(c.args), Client: "pi", ID: c.id})
		require.NoError(t, err)
	}
	entries, err := j.Entries()
	require.NoError(t, err)
	require.Len(t, entries, 3)
	assert.Equal(t, journal.Entry{N: 0, Time: time.Unix(1, 0).UTC(), Tool: journal.StartTool, Commit: id("commit1"), Tree: id("start")}, entries[0])
	assert.Equal(t, journal.Entry{N: 1, Time: time.Unix(1, 0).UTC(), Client: "pi", CallID: "w1", Tool: "write",
		Args: map[string]string{"path": "a.txt", "content": "6 bytes"}, Commit: id("commit2"), Tree: id("s1"), Parent: id("commit1")}, entries[1])
	assert.Equal(t, "b1", entries[2].CallID)
	assert.Equal(t, id("commit2"), entries[2].Parent)

	var refs []string
	var paths [][]string
	for _, a := range agent.calls {
		refs, paths = append(refs, a.Ref), append(paths, a.Paths)
		assert.Equal(t, "/w/.git", a.GitDir, "a clone's own repository")
	}
	assert.Equal(t, []string{journal.Ref(0), journal.Ref(1), journal.Ref(2), journal.Ref(3)}, refs)
	assert.Equal(t, [][]string{nil, {"/w/sub/a.txt"}, nil, {"/w/b.txt"}}, paths, "a write's and an edit's file named, resolved against the cwd")
}

// TestRestore: an undo records the workspace as it was when it changed since the last
// checkpoint, then the restore, so that it can be undone; holders come from the agent.
func TestRestore(t *testing.T) {
	agent := &fakeAgent{state: "s0"}
	j := journal.Open(t.TempDir(), "box")
	r := &Recorder{Journal: j, VM: journal.VMFor("box", "/w", false), Agent: agent}
	require.NoError(t, r.Start(context.Background()))
	agent.state = "s1"
	_, ok, err := r.Record(context.Background(), Call{Tool: "bash"})
	require.NoError(t, err)
	require.True(t, ok)
	agent.state = "s1+shell" // a change no call recorded
	entries, _ := j.Entries()
	target := entries[0]
	target.Commit = "s0" // the fake restores the state the commit names
	e, err := r.Restore(context.Background(), target, Call{Client: "undo", Tool: "undo", Args: map[string]string{"to": "0"}})
	require.NoError(t, err)
	entries, _ = j.Entries()
	require.Len(t, entries, 4)
	assert.Equal(t, "(unrecorded changes)", entries[2].Tool)
	assert.Equal(t, id("s1+shell"), entries[2].Tree)
	assert.Equal(t, e, entries[3])
	assert.Equal(t, id("s0"), e.Tree)
	assert.Equal(t, "/home/agent/.pi-sbx-journal/box.git", agent.calls[0].GitDir, "a private repository outside the workspace")
	h, err := r.Holders(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []Holder{{PID: 7, Command: "sleep", Files: []string{"/w"}}}, h)
}

// TestCancelledCallIsNoJournalError: a call its client cancels before it runs is no
// failure of the journal's to report.
func TestCancelledCallIsNoJournalError(t *testing.T) {
	agent := &fakeAgent{state: "s0"}
	r := &Recorder{Journal: journal.Open(t.TempDir(), "box"), VM: journal.VMFor("box", "/w", true), Agent: cancelled{agent}}
	routes := r.Routes([]mcpserver.Route{{Tool: &tools.Tool{Name: "bash"}, Caller: fakeTool{agent: agent}}}, func(err error) { t.Errorf("reported: %v", err) })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := routes[0].Caller.CallTool(ctx, mcpserver.Call{Name: "bash", Args: json.RawMessage(`{"command":"true"}`)})
	require.NoError(t, err)
}

// cancelled is an agent that fails every call whose context is done, as the channel does.
type cancelled struct{ *fakeAgent }

func (c cancelled) CallTool(ctx context.Context, call mcpserver.Call) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.fakeAgent.CallTool(ctx, call)
}

// TestUndo: the processes holding files are warned of before anything is restored, then
// the undo is Restore's, recorded as tool undo of the client, to the target's number.
func TestUndo(t *testing.T) {
	agent := &fakeAgent{state: "s0"}
	r := &Recorder{Journal: journal.Open(t.TempDir(), "box"), Agent: agent}
	ctx := context.Background()
	require.NoError(t, r.Start(ctx))
	agent.state = "s1"
	_, _, err := r.Record(ctx, Call{Tool: "write"})
	require.NoError(t, err)
	entries, err := r.Journal.Entries()
	require.NoError(t, err)
	var warned []string
	opsAtWarning := 0
	e, err := r.Undo(ctx, journal.Entry{N: 0, Commit: "s0"}, "pi", func(h Holder) {
		warned = append(warned, Warning(h))
		opsAtWarning = len(agent.calls)
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"warning: process 7 (sleep) holds /w in the workspace: it may change it again after the undo"}, warned)
	assert.Equal(t, "holders", agent.calls[opsAtWarning-1].Op, "warned before any restore")
	assert.Equal(t, "s0", agent.state)
	assert.Equal(t, entries[1].N+1, e.N)
	assert.Equal(t, "pi", e.Client)
	assert.Equal(t, "undo", e.Tool)
	assert.Equal(t, map[string]string{"to": "0"}, e.Args)
}

// blockingTool is a call that changes the fake workspace, then waits for release.
type blockingTool struct {
	agent   *fakeAgent
	to      string
	wrote   chan struct{}
	release chan struct{}
}

func (t blockingTool) CallTool(context.Context, mcpserver.Call) (json.RawMessage, error) {
	t.agent.mu.Lock()
	t.agent.state = t.to
	t.agent.mu.Unlock()
	close(t.wrote)
	<-t.release
	return json.RawMessage(`{"content":[]}`), nil
}

// TestCommandWaitsForTheWriteBesideIt: a write and a command run side by side (as pi
// runs a turn's calls), and the command ends first, after the write wrote its file: the
// command's checkpoint is taken after the write's, so that the write's holds its file
// (before, the command's took it, and the write recorded nothing).
func TestCommandWaitsForTheWriteBesideIt(t *testing.T) {
	agent := &fakeAgent{state: "start"}
	j := journal.Open(t.TempDir(), "box")
	r := &Recorder{Journal: j, VM: journal.VMFor("box", "/w", true), Agent: agent, Cwd: "/w"}
	require.NoError(t, r.Start(context.Background()))
	write := blockingTool{agent: agent, to: "written", wrote: make(chan struct{}), release: make(chan struct{})}
	routes := r.Routes([]mcpserver.Route{
		{Tool: &tools.Tool{Name: "write"}, Caller: write},
		{Tool: &tools.Tool{Name: "bash"}, Caller: fakeTool{agent: agent}},
	}, func(err error) { t.Error(err) })
	writeDone := make(chan error, 1)
	go func() {
		_, err := routes[0].Caller.CallTool(context.Background(), mcpserver.Call{Name: "write", Args: json.RawMessage(`{"path":"a.txt","content":"x"}`), ID: "w"})
		writeDone <- err
	}()
	<-write.wrote
	bashDone := make(chan error, 1)
	go func() {
		_, err := routes[1].Caller.CallTool(context.Background(), mcpserver.Call{Name: "bash", Args: json.RawMessage(`{"command":"true"}`), ID: "b"})
		bashDone <- err
	}()
	select {
	case err := <-bashDone:
		t.Fatalf("the command was recorded (%v) while the write beside it was under way", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(write.release)
	require.NoError(t, <-writeDone)
	require.NoError(t, <-bashDone)
	entries, err := j.Entries()
	require.NoError(t, err)
	require.Len(t, entries, 2, "the start and the write; the command changed nothing after it")
	assert.Equal(t, "w", entries[1].CallID, "the write's checkpoint holds its file")
}
