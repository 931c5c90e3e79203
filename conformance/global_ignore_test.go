//go:build e2e

package conformance

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGlobalGitignoreMatchesPi: ripgrep and fd also honour the user's global gitignore
// (core.excludesFile, default ~/.config/git/ignore), below every per-directory file and
// only inside a git repository; fd also reads ~/.config/fd/ignore. HOME and XDG_CONFIG_HOME point both pi's tools and ours
// at a fixture home.
func TestGlobalGitignoreMatchesPi(t *testing.T) {
	home := t.TempDir()
	writeTree(t, home, map[string]string{
		".gitconfig":         "[core]\n\texcludesFile = ~/global-ignore\n",
		"global-ignore":      "*.globalign\nscratch/\n",
		".config/git/ignore": "*.unused\n", // ignored: .gitconfig names another file
		".config/fd/ignore":  "*.fdonly\n", // fd's own global ignore file, for find
	})
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))

	repo := t.TempDir()
	gitInit(t, repo)
	files := map[string]string{
		"a.globalign":     "needle a\n",
		"keep.globalign":  "needle keep\n",
		"b.unused":        "needle b\n",
		"scratch/c.txt":   "needle c\n",
		"src/d.globalign": "needle d\n",
		"src/e.txt":       "needle e\n",
		".gitignore":      "!keep.globalign\n", // a repository whitelist beats the global file
	}
	writeTree(t, repo, files)
	plain := t.TempDir() // outside a repository the global file does not count
	writeTree(t, plain, files)

	noGit := dropLines(inGitDir)
	runSearchCases(t, []searchCase{
		{name: "grep", tool: "grep", cwd: repo, args: map[string]any{"pattern": "needle"}, unordered: true},
		{name: "grep subdir", tool: "grep", cwd: repo, args: map[string]any{"pattern": "needle", "path": "src"}, unordered: true},
		{name: "grep outside git", tool: "grep", cwd: plain, args: map[string]any{"pattern": "needle"}, unordered: true},
		{name: "find", tool: "find", cwd: repo, args: map[string]any{"pattern": "*"}, unordered: true, adjust: noGit},
		{name: "find in subdir", tool: "find", cwd: repo, args: map[string]any{"pattern": "*", "path": "src"}, unordered: true},
	})
}

// TestWorktreeExcludeMatchesPi: in a git worktree, .git is a file pointing into the
// main repository, whose info/exclude still applies (ripgrep and fd resolve it).
func TestWorktreeExcludeMatchesPi(t *testing.T) {
	base := t.TempDir()
	main, wt := filepath.Join(base, "main"), filepath.Join(base, "wt")
	gitInit(t, main)
	writeTree(t, main, map[string]string{"tracked.txt": "needle tracked\n"})
	for _, args := range [][]string{
		{"add", "tracked.txt"},
		{"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init"},
		{"worktree", "add", "-q", wt},
	} {
		out, err := exec.Command("git", append([]string{"-C", main}, args...)...).CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	writeTree(t, main, map[string]string{".git/info/exclude": "*.secret\n"})
	writeTree(t, wt, map[string]string{"a.secret": "needle secret\n", "b.txt": "needle b\n"})
	runSearchCases(t, []searchCase{
		{name: "grep", tool: "grep", cwd: wt, args: map[string]any{"pattern": "needle"}, unordered: true},
		{name: "find", tool: "find", cwd: wt, args: map[string]any{"pattern": "*"}, unordered: true},
	})
}
