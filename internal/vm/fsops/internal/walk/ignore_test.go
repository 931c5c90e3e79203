package walk

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIgnoreRules(t *testing.T) {
	rules := parseIgnore([]byte("# comment\n*.log\n!keep.log\nbuild/\n/root.txt\ndocs/*.md\n\\#hash\ntrailing   \nx/**\n"), false)
	cases := []struct {
		path  string
		isDir bool
		want  IgnoreMatch
	}{
		{"a.log", false, matchIgnore},
		{"deep/er/a.log", false, matchIgnore}, // no '/': any depth
		{"keep.log", false, matchWhitelist},   // the last matching rule wins
		{"build", true, matchIgnore},
		{"build", false, matchNone}, // "build/" is for directories only
		{"root.txt", false, matchIgnore},
		{"sub/root.txt", false, matchNone}, // leading '/' anchors
		{"docs/a.md", false, matchIgnore},
		{"y/docs/a.md", false, matchNone}, // a '/' inside anchors too
		{"#hash", false, matchIgnore},
		{"# comment", false, matchNone},
		{"trailing", false, matchIgnore}, // trailing spaces are trimmed
		{"x", true, matchNone},           // "x/**" is what is inside x
		{"x/y", false, matchIgnore},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, rules.match(c.path, c.isDir), c.path)
	}
}

// TestIgnoreChain checks the ignore crate's rules across directories: the nearest file
// decides, .gitignore counts only inside a repository and stops at its root, and
// .ignore outranks .gitignore.
func TestIgnoreChain(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	write("repo/.git/info/exclude", "excluded\n")
	write("repo/.gitignore", "*.tmp\nnested-ignored\n")
	write("repo/sub/.gitignore", "!keep.tmp\n")
	write("repo/sub/.ignore", "*.txt\n")
	write("repo/inner/.git/HEAD", "")
	write("repo/inner/.gitignore", "")
	write("plain/.gitignore", "*.tmp\n")
	write("plain/.ignore", "*.bak\n")

	names := IgnoreFileNames{Custom: ".rgignore"}
	// chain loads the ancestors of dirs[0], then each of dirs in turn, as a walk does.
	chain := func(dirs ...string) *dirIgnore {
		d := loadParentIgnores(filepath.Join(root, dirs[0]), names)
		for _, dir := range dirs {
			abs := filepath.Join(root, dir)
			entries, err := os.ReadDir(abs)
			require.NoError(t, err)
			has := func(n string) bool {
				for _, e := range entries {
					if e.Name() == n {
						return true
					}
				}
				return false
			}
			d = loadDirIgnore(d, abs, has, names)
		}
		return d
	}
	repo := chain("repo")
	sub := chain("repo", "repo/sub")
	inner := chain("repo", "repo/inner")
	plain := chain("plain")
	cases := []struct {
		d          *dirIgnore
		rel        string
		requireGit bool
		want       bool
	}{
		{repo, "repo/a.tmp", true, true},
		{repo, "repo/excluded", true, true},
		{sub, "repo/sub/a.tmp", true, true},
		{sub, "repo/sub/keep.tmp", true, false}, // nearer whitelist wins
		{sub, "repo/sub/a.txt", true, true},     // .ignore
		{inner, "repo/inner/a.tmp", true, false},
		{inner, "repo/inner/nested-ignored", true, false}, // parent repo's rules stop at a nested repo
		{plain, "plain/a.tmp", true, false},               // .gitignore needs a repository...
		{plain, "plain/a.tmp", false, true},               // ...unless --no-require-git
		{plain, "plain/a.bak", true, true},                // .ignore always counts
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.d.ignored(filepath.Join(root, c.rel), false, ignoreScope{requireGit: c.requireGit}), c.rel)
	}
}

func TestGrepOverride(t *testing.T) {
	cases := []struct {
		glob  string
		rel   string
		isDir bool
		want  IgnoreMatch
	}{
		{"*.go", "a/b.go", false, matchWhitelist}, // beats ignore files
		{"*.go", "a/b.txt", false, matchIgnore},   // whitelist mode skips the rest
		{"*.go", "a", true, matchNone},            // directories are still walked
		{"!*.md", "x/y.md", false, matchIgnore},
		{"!*.md", "x/y.go", false, matchNone},
		{"./src/*.go", "src/a.go", false, matchWhitelist},
		{"./src/*.go", "lib/src/a.go", false, matchIgnore},
		{"!./build/**", "build/x", false, matchIgnore},
	}
	for _, c := range cases {
		m, err := Override(c.glob)
		require.NoError(t, err)
		assert.Equal(t, c.want, m(c.rel, c.isDir), "%s on %s", c.glob, c.rel)
	}
	_, err := Override("!./a[")
	assert.EqualError(t, err, "error parsing glob '!a[': unclosed character class; missing ']'")
}
