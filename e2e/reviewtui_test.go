//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPiReviewTUI: pi's TUI (tmux) in review mode: the status line says `review: 0 files
// changed` once the sandbox is made, `review: 2 files changed` after the model's turn; `/sandbox review` shows the review in a scrollable view
// (the +x script in "Runs on the host" first, End shows the diff's last lines, q closes
// it); `/sandbox land README.md` asks, lands only that file once confirmed, and the
// status line then says what is left; discard from the command line removes the sandbox,
// and the next turn works in a fresh one. The screens are in the test log.
func TestPiReviewTUI(t *testing.T) {
	w := newWorld(t)
	gitIn(t, w.ws, "init", "-q")
	gitIn(t, w.ws, "add", "-A")
	gitIn(t, w.ws, "commit", "-q", "-m", "fixture")
	state := t.TempDir()
	calls := `[["edit",{"path":"README.md","edits":[{"oldText":"hello world","newText":"hello from the tui"}]}],` +
		`["bash",{"command":"echo true > run.sh && chmod +x run.sh"}]]`
	p := startPiTUIWith(t, w, w.ws, "(review", "DOCKER_SANDBOX_WORKSPACE_MODE=review", "XDG_STATE_HOME="+state,
		"DOCKER_SANDBOX_ENV_ALLOWLIST=SBXSIM_STATE,SBXSIM_DOCKER,XDG_STATE_HOME", "PI_FAUX_CALLS="+calls)
	boxes := w.sandboxes()
	require.Len(t, boxes, 1)
	p.expect("review: 0 files changed", 30*time.Second) // from the start

	p.send("go")
	p.expect("turn 1 done", time.Minute)
	p.expect("review: 2 files changed", time.Minute)
	readme, err := os.ReadFile(filepath.Join(w.ws, "README.md"))
	require.NoError(t, err)
	assert.Equal(t, "# demo\nhello world\nsecond line\n", string(readme), "nothing landed yet")

	p.send("/sandbox review")
	p.expect("review of "+boxes[0]+" — lines 1-", 30*time.Second)
	assert.Regexp(t, `(?s)Runs on the host.*A \+x run\.sh.*Other changes \(1\).*M +README\.md`, p.screen)
	t.Logf("/sandbox review:\n%s", p.screen)
	p.tmux("send-keys", "-t", "t", "End")
	p.expect("+hello from the tui", 10*time.Second)
	p.tmux("send-keys", "-t", "t", "q")
	assert.Eventually(t, func() bool { return !strings.Contains(p.tmux("capture-pane", "-p", "-t", "t"), "review of "+boxes[0]) },
		10*time.Second, 50*time.Millisecond, "q closes the view")

	p.send("/sandbox land README.md")
	p.expect("Land 1 change(s) into "+w.ws+"?", 30*time.Second)
	assert.Contains(t, p.screen, "M README.md")
	t.Logf("/sandbox land asks:\n%s", p.screen)
	p.tmux("send-keys", "-t", "t", "Enter") // Yes
	p.expect("wrote README.md", 30*time.Second)
	p.expect("review: 1 file changed", 10*time.Second)
	readme, err = os.ReadFile(filepath.Join(w.ws, "README.md"))
	require.NoError(t, err)
	assert.Equal(t, "# demo\nhello from the tui\nsecond line\n", string(readme))
	assert.NoFileExists(t, filepath.Join(w.ws, "run.sh"), "only what was named landed")
	assert.Contains(t, p.screen, "landed 1 change(s) from "+boxes[0]+"; 1 left")

	// discard, while pi runs: the sandbox holding the work goes; the next turn gets a
	// fresh one, from the host's workspace as it is now (README landed, no run.sh).
	discard := command(backendBin, w.env("XDG_STATE_HOME="+state), "discard", "--workspace", w.ws)
	out, err := discard.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "discarded 1 change(s) of "+boxes[0]+"\n", string(out))
	assert.Empty(t, w.sandboxes())
	p.send("go")
	p.expect("turn 2 done", time.Minute)
	p.expect("review: 1 file changed", time.Minute) // run.sh again; the edit finds no "hello world"
	assert.Equal(t, boxes, w.sandboxes(), "made again under its name")
	// pi's own refresh after the turn may be collecting at this moment, and two collects
	// of one sandbox at once can fail one of them (keep's fetch): ask until one answers.
	require.Eventually(t, func() bool {
		out, err = command(backendBin, w.env("XDG_STATE_HOME="+state), "review", "--stat", "--workspace", w.ws).CombinedOutput()
		return err == nil
	}, 30*time.Second, 100*time.Millisecond, "review: %s", out)
	assert.Contains(t, string(out), "1 file changed in "+boxes[0])
	assert.Contains(t, string(out), "A +x run.sh")

	p.tmux("send-keys", "-t", "t", "C-d")
	p.expect("PI-EXIT=0", 30*time.Second)
}

// TestPiReviewOutsideReviewMode: /sandbox review (and review --calls, undo) in a session whose workspace is mounted
// read/write says so (and why it matters) instead of failing inside serve.
func TestPiReviewOutsideReviewMode(t *testing.T) {
	w := newWorld(t)
	gitInit(t, w.ws)
	p := startPiTUIWith(t, w, w.ws, "(rw")
	p.send("/sandbox review")
	p.expect("review: the workspace is mounted rw, not in review mode", 30*time.Second)
	p.send("/sandbox undo")
	expectFlowed(t, p, "undo: the workspace is mounted rw, not in review mode (DOCKER_SANDBOX_WORKSPACE_MODE=review): there is no journal of the calls", 30*time.Second)
	p.send("/sandbox review --calls")
	expectFlowed(t, p, "review --calls: the workspace is mounted rw, not in review mode", 30*time.Second)
	p.tmux("send-keys", "-t", "t", "C-d")
	p.expect("PI-EXIT=0", 30*time.Second)
}

// TestPiReviewUndoTUI: in pi's TUI, /sandbox review --calls lists the turn's two changing
// calls with pi's tool-call ids; /sandbox undo asks once, naming the checkpoint it would
// restore, and on yes resets the sandbox's workspace to after the first call (the second
// call's file gone in the sandbox, the host untouched) and says so.
func TestPiReviewUndoTUI(t *testing.T) {
	w := newWorld(t)
	gitIn(t, w.ws, "init", "-q")
	gitIn(t, w.ws, "add", "-A")
	gitIn(t, w.ws, "commit", "-q", "-m", "fixture")
	state := t.TempDir()
	calls := `[["write",{"path":"j.txt","content":"one\n"}],["bash",{"command":"echo two > k.txt"}]]`
	p := startPiTUIWith(t, w, w.ws, "(review", "DOCKER_SANDBOX_WORKSPACE_MODE=review", "XDG_STATE_HOME="+state,
		"DOCKER_SANDBOX_ENV_ALLOWLIST=SBXSIM_STATE,SBXSIM_DOCKER,XDG_STATE_HOME", "PI_FAUX_CALLS="+calls)
	boxes := w.sandboxes()
	require.Len(t, boxes, 1)
	p.expect("review: 0 files changed", 30*time.Second)
	p.send("go")
	p.expect("turn 1 done", time.Minute)
	p.expect("review: 2 files changed", time.Minute)

	p.send("/sandbox review --calls")
	p.expect("calls of "+boxes[0]+" — lines 1-2", 30*time.Second)
	// pi runs a turn's two calls side by side: either may be checkpointed first, each
	// with its own file. The view cuts each line to the terminal's 100 columns.
	write := regexp.MustCompile(`(?m)^([12]) +\S+ +call1-0-0 +write +content="4 bytes" path="j.txt"  1 file`).FindStringSubmatch(p.screen)
	bash := regexp.MustCompile(`(?m)^([12]) +\S+ +call1-0-1 +bash +command="echo two > k.txt"  1 file`).FindStringSubmatch(p.screen)
	require.NotNil(t, write, p.screen)
	require.NotNil(t, bash, p.screen)
	require.NotEqual(t, write[1], bash[1])
	first := `write content="4 bytes" path="j.txt"`
	firstID := "write call1-0-0"
	if bash[1] == "1" {
		first, firstID = `bash command="echo two > k.txt"`, "bash call1-0-1"
	}
	t.Logf("/sandbox review --calls:\n%s", p.screen)
	p.tmux("send-keys", "-t", "t", "q")
	assert.Eventually(t, func() bool { return !strings.Contains(p.tmux("capture-pane", "-p", "-t", "t"), "calls of "+boxes[0]) },
		10*time.Second, 50*time.Millisecond, "q closes the view")

	p.send("/sandbox undo")
	expectFlowed(t, p, "Reset the sandbox's workspace back to after call 1 ("+first+")?", 30*time.Second)
	t.Logf("/sandbox undo asks:\n%s", p.screen)
	// Nothing of the user's runs in the sandbox: the session's own keep-alive and agent
	// are not named as holding the workspace.
	assert.NotContains(t, p.screen, "warning: process")
	p.tmux("send-keys", "-t", "t", "Enter") // Yes
	expectFlowed(t, p, "reset the workspace of "+boxes[0]+" to checkpoint 1 (after "+firstID+"); this undo is checkpoint 3", 30*time.Second)
	p.expect("review: 1 file changed", 30*time.Second)
	assert.NoFileExists(t, filepath.Join(w.ws, "j.txt"), "the host is not touched")
	out, err := command(backendBin, w.env("XDG_STATE_HOME="+state, "DOCKER_SANDBOX="+boxes[0]), "review", "--calls", "--workspace", w.ws).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Regexp(t, `(?m)^3 +pi\S* +- +undo +to="1"  1 file\(s\) \+0 -1$`, string(out))

	// A `!` command is a checkpoint of its own (no tool-call id: the request's), taken before
	// pi shows it finished.
	p.send("!echo three > m.txt")
	p.expectDone(15 * time.Second)
	out, err = command(backendBin, w.env("XDG_STATE_HOME="+state, "DOCKER_SANDBOX="+boxes[0]), "review", "--calls", "--workspace", w.ws).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Regexp(t, `(?m)^4 +pi\S* +\d+ +pi_sbx_pty_exec +command="echo three > m.txt"  1 file\(s\) \+1 -0$`, string(out))

	p.tmux("send-keys", "-t", "t", "C-d")
	p.expect("PI-EXIT=0", 30*time.Second)
}

// expectFlowed waits for want on the screen with its lines joined and its white space
// runs made one space: a notice longer than the terminal is wrapped.
func expectFlowed(t *testing.T, p *piTUI, want string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		p.screen = p.tmux("capture-pane", "-p", "-J", "-t", "t")
		if strings.Contains(strings.Join(strings.Fields(p.screen), " "), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("screen never showed %q within %s:\n%s", want, within, p.screen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// twoTurns is pi in review mode after two turns, each the same write (a change only the
// first time) and a line more in k.txt: three checkpoints in the journal.
type twoTurns struct {
	p   *piTUI
	box string
	cli func(args ...string) string // the CLI on the same sandbox and state
	// The first turn's write and bash run side by side, so either may be checkpoint 2,
	// where the workspace is after that turn: its call as the offer names it
	// (`bash command="…"`) and as the undo reports it (`bash call1-0-1`).
	second, secondID string
}

func startTwoTurns(t *testing.T, extraEnv ...string) twoTurns {
	w := newWorld(t)
	gitIn(t, w.ws, "init", "-q")
	gitIn(t, w.ws, "add", "-A")
	gitIn(t, w.ws, "commit", "-q", "-m", "fixture")
	state := t.TempDir()
	calls := `[["write",{"path":"j.txt","content":"one\n"}],["bash",{"command":"date +%N >> k.txt"}]]`
	p := startPiTUIWith(t, w, w.ws, "(review", append([]string{"DOCKER_SANDBOX_WORKSPACE_MODE=review", "XDG_STATE_HOME=" + state,
		"DOCKER_SANDBOX_ENV_ALLOWLIST=SBXSIM_STATE,SBXSIM_DOCKER,XDG_STATE_HOME", "PI_FAUX_CALLS=" + calls}, extraEnv...)...)
	boxes := w.sandboxes()
	require.Len(t, boxes, 1)
	p.expect("review: 0 files changed", 30*time.Second)
	p.send("go")
	p.expect("turn 1 done", time.Minute)
	p.expect("review: 2 files changed", time.Minute) // the turn has ended: the next prompt is a turn of its own
	p.send("again")
	p.expect("turn 2 done", time.Minute)
	cli := func(args ...string) string {
		t.Helper()
		out, err := command(backendBin, w.env("XDG_STATE_HOME="+state, "DOCKER_SANDBOX="+boxes[0]), append(args, "--workspace", w.ws)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	require.Eventually(t, func() bool { return strings.Count(cli("review", "--calls"), "\n") == 3 }, 30*time.Second, 200*time.Millisecond,
		"three checkpoints: j.txt, k.txt, k.txt again")
	calls2 := cli("review", "--calls")
	m := regexp.MustCompile(`(?m)^2 +\S+ +(call1-0-[01]) +(\w+) +(.*?)  1 file`).FindStringSubmatch(calls2)
	require.NotNil(t, m, "checkpoint 2 is one of the first turn's calls:\n%s", calls2)
	return twoTurns{p: p, box: boxes[0], cli: cli, second: m[2] + " " + m[3], secondID: m[2] + " " + m[1]}
}

// TestPiReviewTreeTUI: after /tree moves pi's session back to the end of the first turn,
// the package asks once to move the sandbox's workspace back to after that turn's
// latest checkpoint (its calls mapped by pi's tool-call ids), and on yes does it and
// says so.
func TestPiReviewTreeTUI(t *testing.T) {
	s := startTwoTurns(t)
	p := s.p
	p.send("/tree")
	p.expect("Type to search", 10*time.Second)
	p.tmux("send-keys", "-t", "t", "-l", "turn 1 done")
	time.Sleep(300 * time.Millisecond)
	p.tmux("send-keys", "-t", "t", "Enter")
	p.expect("Summarize branch?", 10*time.Second)
	p.tmux("send-keys", "-t", "t", "Enter") // No summary
	expectFlowed(t, p, "Move the sandbox's workspace back to after call 2 ("+s.second+")?", 30*time.Second)
	t.Logf("after /tree:\n%s", p.screen)
	flowed := strings.Join(strings.Fields(p.screen), " ")
	assert.Contains(t, flowed, "reset to what they were after call 2 ("+s.second+"); the host workspace is not touched")
	p.tmux("send-keys", "-t", "t", "Enter") // Yes
	expectFlowed(t, p, "reset the workspace of "+s.box+" to checkpoint 2 (after "+s.secondID+")", 30*time.Second)
	assert.Regexp(t, `(?m)^4 +pi\S* +- +undo +to="2"  1 file\(s\) \+0 -1$`, s.cli("review", "--calls"))

	p.tmux("send-keys", "-t", "t", "C-d")
	p.expect("PI-EXIT=0", 30*time.Second)
}

// TestPiReviewForkTUI: /fork from the second prompt (a new session with the first turn
// only) offers, on a sandbox kept between sessions, to move its workspace back to after
// the first turn's last changing call; the forked session then runs on that sandbox.
// /clone (the whole branch) has nothing to offer: the workspace is where it belongs.
func TestPiReviewForkTUI(t *testing.T) {
	s := startTwoTurns(t, "DOCKER_SANDBOX_REUSE=1")
	p := s.p
	p.send("/clone")
	p.expect("Cloned to new session", 30*time.Second)
	assert.NotContains(t, p.screen, "Move the sandbox's workspace")

	p.send("/fork")
	p.expect("Fork from Message", 10*time.Second)
	p.tmux("send-keys", "-t", "t", "Enter") // the newest prompt, "again", is selected
	expectFlowed(t, p, "Move the sandbox's workspace back to after call 2 ("+s.second+")?", 30*time.Second)
	p.tmux("send-keys", "-t", "t", "Enter") // Yes
	expectFlowed(t, p, "reset the workspace of "+s.box+" to checkpoint 2 (after "+s.secondID+")", 30*time.Second)
	p.expect("Forked to new session", 30*time.Second)
	t.Logf("after /fork:\n%s", p.screen)
	assert.Regexp(t, `(?m)^4 +pi\S* +- +undo +to="2"  1 file\(s\) \+0 -1$`, s.cli("review", "--calls"))
	p.expect("review: 2 files changed", time.Minute) // the new session's instance, on the kept sandbox

	p.tmux("send-keys", "-t", "t", "C-c") // the editor holds the forked prompt: clear it, then exit
	p.tmux("send-keys", "-t", "t", "C-d")
	p.expect("PI-EXIT=0", 30*time.Second)
}
