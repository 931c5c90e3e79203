//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/audit"
)

// TestJournalOfThreeClients shows issue 32's journal with every kind of client on one
// review-mode sandbox (git and non-git workspaces): a real pi session (pi 1.6.0's SDK,
// the scripted model, this package; extension/test/journal-e2e.mjs, driven a turn at a
// time) makes four changing calls, an editor's MCP client (a second serve on the same
// sandbox) one and `pi-sbx-backend shell` one, interleaved. Then: review --calls lists
// the six checkpoints with each client's name and the id it gave; undo --last 2 brings
// the sandbox back to exactly the files after call 4 (sha256 of every file, taken in the
// sandbox after each call); land --calls 1..3 changes exactly those calls' net change on
// the host (sha256 of every host file); the hook pi's bash planted in .git is flagged by
// review and never reaches the host, not even with land --all; and the audit log has
// every call of all three clients, with their ids.
func TestJournalOfThreeClients(t *testing.T) {
	for _, tc := range []struct {
		name string
		git  bool
	}{{"git", true}, {"plain", false}} {
		t.Run(tc.name, func(t *testing.T) { journalOfThreeClients(t, tc.git) })
	}
}

func journalOfThreeClients(t *testing.T, git bool) {
	root, node := piEnv(t)
	w, state := reviewWorld(t, git)
	host0 := hostFileSums(t, w.ws) // the sandbox's workspace before any call (checkpoint 0)
	// One environment for the three clients, as one user's shell would give them: the
	// editor and the shell join pi's sandbox by name.
	extra := []string{"PI_SBX_BACKEND=" + backendBin, "PATH=" + filepath.Dir(node) + ":" + os.Getenv("PATH"),
		"DOCKER_SANDBOX_WORKSPACE_MODE=review", "XDG_STATE_HOME=" + state, "DOCKER_SANDBOX_GC_HOURS=0",
		"DOCKER_SANDBOX_ENV_ALLOWLIST=SBXSIM_STATE,SBXSIM_DOCKER,XDG_STATE_HOME"}
	pi := startScriptedPi(t, root, node, w.ws, w.env(extra...))

	// The six changing calls, in this order; sums[n] is the sandbox's files after call n.
	sums := make([]map[string]string, 7)
	sums[0] = host0
	pi.turn(t, []any{"write", map[string]any{"path": "j/one.txt", "content": "one\n"}, "toolu_w1"})
	boxes := w.sandboxes()
	require.Len(t, boxes, 1, "pi's session made the sandbox")
	name := boxes[0]
	extra = append(extra, "DOCKER_SANDBOX="+name)
	editor, _, editorErr := w.serveAs("editor", nil, nil, extra...)
	editorCall := func(id, tool, args string) string {
		t.Helper()
		params := &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)}
		if id != "" {
			params.Meta = mcp.Meta{"pi-sbx/callId": id}
		}
		res, err := editor.CallTool(context.Background(), params)
		require.NoError(t, err, "%s %s", tool, args)
		require.False(t, res.IsError, "%s: %s\n%s", tool, text(res), editorErr.String())
		return text(res)
	}
	// The checksums are read through the editor's bash, a call that changes nothing (so
	// no checkpoint) but is in the audit log, id "sums".
	sumsCalls := 0
	sandboxSums := func() map[string]string {
		t.Helper()
		sumsCalls++
		return parseSums(t, editorCall("sums", "bash", bashArgs(sumsScript)))
	}
	sums[1] = sandboxSums()
	editorCall("ed-1", "write", `{"path":"j/editor.txt","content":"from the editor\n"}`)
	sums[2] = sandboxSums()
	pi.turn(t, []any{"edit", map[string]any{"path": "j/one.txt", "edits": []any{map[string]any{"oldText": "one", "newText": "one, edited"}}}, "toolu_e1"})
	sums[3] = sandboxSums()
	cli := func(args ...string) string {
		t.Helper()
		c := command(backendBin, w.env(extra...), args...)
		c.Dir = w.ws
		out, err := c.CombinedOutput()
		require.NoError(t, err, "%v: %s", args, out)
		return string(out)
	}
	cli("shell", "--", "sh", "-c", "echo s > shell.txt && rm src/main.go")
	sums[4] = sandboxSums()
	pi.turn(t, []any{"bash", map[string]any{"command": "printf 'two\\nlines\\n' > j/two.txt && echo more >> README.md"}, "toolu_b1"})
	sums[5] = sandboxSums()
	// The hook alone would be no checkpoint (the journal never holds .git); k.txt makes
	// the call one.
	pi.turn(t, []any{"bash", map[string]any{"command": "mkdir -p .git/hooks && printf '#!/bin/sh\\necho owned > /tmp/wtjc-owned\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && echo k > k.txt"}, "toolu_b2"})
	sums[6] = sandboxSums()
	for n := 1; n <= 6; n++ {
		assert.NotEqual(t, sums[n-1], sums[n], "call %d changed the sandbox's files", n)
	}

	// review --calls: six checkpoints, each with its client and the id it gave (the
	// shell gives none), the editor's checksum reads none.
	lines := strings.Split(strings.TrimSpace(cli("review", "--calls")), "\n")
	require.Len(t, lines, 6, "six changing calls:\n%s", strings.Join(lines, "\n"))
	for i, want := range []string{
		`^1 +pi-sbx-extension +toolu_w1 +write +content="4 bytes" path="j/one.txt"  1 file\(s\) \+1 -0$`,
		`^2 +editor +ed-1 +write +content="16 bytes" path="j/editor.txt"  1 file\(s\) \+1 -0$`,
		`^3 +pi-sbx-extension +toolu_e1 +edit +edits="1" path="j/one.txt"  1 file\(s\) \+1 -1$`,
		`^4 +shell +- +shell +command="sh -c echo s > shell.txt && rm src/main.go"  2 file\(s\) `,
		`^5 +pi-sbx-extension +toolu_b1 +bash +command=.*  2 file\(s\) \+3 -0$`,
		`^6 +pi-sbx-extension +toolu_b2 +bash +command=.*  1 file\(s\) \+1 -0$`,
	} {
		assert.Regexp(t, regexp.MustCompile(want), lines[i])
	}
	// The planted hook: flagged in a section of its own, never part of the work.
	assert.Regexp(t, `In the sandbox's own \.git: would run on the host, never landed \(1\)\n  ! \.git/hooks/pre-commit: `, cli("review", "--stat"))

	// undo --last 2: exactly the files after call 4, in the sandbox; the host untouched.
	assert.Contains(t, cli("undo", "--last", "2"), "to checkpoint 4")
	assert.Equal(t, sums[4], sandboxSums(), "undo --last 2: exactly the files after call 4")
	assert.Equal(t, host0, hostFileSums(t, w.ws), "an undo never touches the host")

	// land --calls 1..3: the host changes by exactly the net change of calls 1 to 3.
	// They are the first calls, and the sandbox started as the host is (host0), so the
	// host's files must then be the sandbox's after call 3: calls 1 and 3 on one file,
	// call 2 on another, nothing of calls 4 to 6.
	assert.Contains(t, cli("land", "--calls", "1..3"), "landed 2 change(s)")
	assert.Equal(t, sums[3], hostFileSums(t, w.ws), "land --calls 1..3: exactly their net change")
	var netChange []string
	for p, v := range sums[3] {
		if host0[p] != v {
			netChange = append(netChange, p)
		}
	}
	assert.ElementsMatch(t, []string{"j/editor.txt", "j/one.txt"}, netChange, "calls 1 to 3 only add files")

	// The rest lands with land --all; the hook, flagged, does not, and never ran.
	cli("land", "--all")
	assert.Equal(t, sums[4], hostFileSums(t, w.ws), "the host has the sandbox's files after the undo")
	assert.NoFileExists(t, filepath.Join(w.ws, ".git/hooks/pre-commit"))
	assert.NoFileExists(t, "/tmp/wtjc-owned", "nothing of the sandbox ran on the host")

	// The audit log: every call of the three clients, with their ids.
	type key struct{ client, id, tool string }
	logged := map[key]int{}
	for _, line := range strings.Split(strings.TrimSpace(cli("log", "--sandbox", name, "--json")), "\n") {
		var e audit.Entry
		require.NoError(t, json.Unmarshal([]byte(line), &e), line)
		assert.Equal(t, "ok", e.Outcome, "%+v", e)
		logged[key{e.Client, e.CallID, e.Tool}]++
	}
	for _, k := range []key{
		{"pi-sbx-extension", "toolu_w1", "write"}, {"pi-sbx-extension", "toolu_e1", "edit"},
		{"pi-sbx-extension", "toolu_b1", "bash"}, {"pi-sbx-extension", "toolu_b2", "bash"},
		{"editor", "ed-1", "write"}, {"shell", "", "shell"},
	} {
		assert.Equal(t, 1, logged[k], "%+v is in the audit log once:\n%v", k, logged)
	}
	assert.Equal(t, sumsCalls, logged[key{"editor", "sums", "bash"}], "every checksum read of the editor")
}

// scriptedPi is pi (extension/test/journal-e2e.mjs) waiting for its next turn.
type scriptedPi struct {
	in    io.WriteCloser
	lines chan string
	err   *strings.Builder
}

// startScriptedPi starts pi's SDK session with the package in ws, with env. It ends
// when the test does: stdin closed, then killed if it has not ended within a minute.
func startScriptedPi(t *testing.T, root, node, ws string, env []string) *scriptedPi {
	config, err := json.Marshal(map[string]any{"ws": ws, "extension": filepath.Join(root, "extension")})
	require.NoError(t, err)
	cmd := command(node, env, filepath.Join(root, "extension/test/journal-e2e.mjs"), string(config))
	cmd.Dir = filepath.Join(root, "extension")
	p := &scriptedPi{lines: make(chan string, 1), err: &strings.Builder{}}
	cmd.Stderr = p.err
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	p.in, err = cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "DONE "); ok {
				p.lines <- line
			}
		}
	}()
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		p.in.Close()
		select {
		case <-done:
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return p
}

// turn has the model make calls ([name, args, id] each) in one turn and fails the test
// unless every one succeeded. The bound only keeps a broken build from hanging.
func (p *scriptedPi) turn(t *testing.T, calls ...[]any) {
	t.Helper()
	line, err := json.Marshal(calls)
	require.NoError(t, err)
	_, err = p.in.Write(append(line, '\n'))
	require.NoError(t, err)
	select {
	case res, ok := <-p.lines:
		require.True(t, ok, "pi ended: %s", p.err.String())
		var results []struct {
			ID      string `json:"id"`
			IsError bool   `json:"isError"`
			Text    string `json:"text"`
		}
		require.NoError(t, json.Unmarshal([]byte(res), &results))
		require.Len(t, results, len(calls), res)
		for _, r := range results {
			require.False(t, r.IsError, "%s: %s", r.ID, r.Text)
		}
	case <-time.After(3 * time.Minute):
		t.Fatalf("pi's turn did not end: %s", p.err.String())
	}
}

// parseSums reads sumsScript's output ("HASH  ./PATH" lines) as path → hash.
func parseSums(t *testing.T, out string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		hash, p, ok := strings.Cut(line, "  ./")
		require.True(t, ok, "not a sha256sum line: %q", line)
		sums[p] = hash
	}
	return sums
}

// hostFileSums is what sumsScript gives for dir on the host: every regular file but
// those in the top .git directory, path → sha256.
func hostFileSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		switch {
		case rel == ".git" && d.IsDir():
			return filepath.SkipDir
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			h := sha256.Sum256(b)
			sums[rel] = hex.EncodeToString(h[:])
		}
		return nil
	}))
	return sums
}
