package conformance

import (
	"path/filepath"
	"testing"
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
