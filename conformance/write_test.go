package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		w("symlink loop", "loop1", "x"),
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
	s("hard.txt", "old\n", 0o644)
	must(os.Link(filepath.Join(root, "work", "hard.txt"), filepath.Join(root, "work", "hard-other-name.txt")))
}
