package walk

import (
	"bytes"
	"errors"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// IgnoreMatch is the verdict of a rule set on one path.
type IgnoreMatch int8

const (
	matchNone      IgnoreMatch = iota // no rule matched
	matchIgnore                       // the last matching rule ignores the path
	matchWhitelist                    // the last matching rule is a "!" rule
)

// ignoreRule is one line of a gitignore-format file, as ripgrep's ignore crate reads it.
type ignoreRule struct {
	re       *regexp.Regexp
	basename bool // no '/' in the pattern: it matches the last path component at any depth
	dirOnly  bool // trailing '/': directories only
	negate   bool // leading '!': a whitelist rule
	// Fast paths for the commonest shapes, so big trees do not pay a regexp per entry.
	literal string // the whole pattern is this literal
	suffix  string // the pattern is "*" + suffix (suffix has no glob characters)
}

// IgnoreRules is one parsed ignore file (or the --glob overrides); its paths are
// relative to the directory the file applies to.
type IgnoreRules struct {
	rules []ignoreRule
}

// parseIgnore parses gitignore-format content the way the ignore crate does: comments,
// trailing-space trimming, "!" negation, "/" anchoring, "dir/" directory-only rules and
// "**" components. Invalid globs are skipped, as ripgrep skips them (with a warning).
func parseIgnore(content []byte, ignoreCase bool) *IgnoreRules {
	var rs IgnoreRules
	for _, line := range bytes.Split(content, []byte("\n")) {
		if r, ok, _ := parseIgnoreLine(string(line), ignoreCase); ok {
			rs.rules = append(rs.rules, r)
		}
	}
	if len(rs.rules) == 0 {
		return nil
	}
	return &rs
}

// parseIgnoreLine parses one line; ok is false for blank lines, comments and (with err
// set) invalid globs.
func parseIgnoreLine(line string, ignoreCase bool) (r ignoreRule, ok bool, err error) {
	line = strings.TrimSuffix(line, "\r")
	if strings.HasPrefix(line, "#") {
		return ignoreRule{}, false, nil
	}
	if !strings.HasSuffix(line, "\\ ") {
		line = strings.TrimRight(line, " \t")
	}
	if line == "" {
		return ignoreRule{}, false, nil
	}
	switch {
	case strings.HasPrefix(line, "\\!"), strings.HasPrefix(line, "\\#"):
		line = line[1:]
	case strings.HasPrefix(line, "!"):
		r.negate = true
		line = line[1:]
	}
	anchored := false
	if strings.HasPrefix(line, "/") {
		anchored = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") && !strings.HasSuffix(line, "\\/") {
		r.dirOnly = true
		line = line[:len(line)-1]
	}
	if line == "" {
		return ignoreRule{}, false, nil
	}
	if !anchored && !strings.Contains(line, "/") {
		r.basename = true
	}
	if strings.HasSuffix(line, "/**") {
		line += "/*" // "dir/**" matches what is inside dir, never dir itself
	}
	re, err := CompileGlob(line, ignoreCase)
	if err != nil {
		return ignoreRule{}, false, err
	}
	r.re = re
	if r.basename && !ignoreCase {
		switch {
		case !HasGlobMeta(line):
			r.literal = line
		case strings.HasPrefix(line, "*") && !HasGlobMeta(line[1:]):
			r.suffix = line[1:]
		}
	}
	return r, true, nil
}

func HasGlobMeta(s string) bool { return strings.ContainsAny(s, "*?[]{}\\") }

// match reports the verdict for rel (slash-separated, relative to the rules' directory).
// The last matching rule wins, as in git.
func (rs *IgnoreRules) match(rel string, isDir bool) IgnoreMatch {
	if rs == nil {
		return matchNone
	}
	base := rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		base = rel[i+1:]
	}
	for i := len(rs.rules) - 1; i >= 0; i-- {
		r := &rs.rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		subject := rel
		if r.basename {
			subject = base
		}
		var ok bool
		switch {
		case r.literal != "":
			ok = subject == r.literal
		case r.suffix != "":
			ok = strings.HasSuffix(subject, r.suffix) && !strings.Contains(subject, "/")
		default:
			ok = r.re.MatchString(subject)
		}
		if ok {
			if r.negate {
				return matchWhitelist
			}
			return matchIgnore
		}
	}
	return matchNone
}

// IgnoreFileNames says which per-directory files a tool reads, highest precedence first:
// ripgrep reads .rgignore and .ignore, fd reads .fdignore and .ignore; both read
// .gitignore (inside a git repository only) and .git/info/exclude.
type IgnoreFileNames struct {
	Custom string // ".rgignore" or ".fdignore"
}

// dirIgnore is the ignore state of one directory: its own files plus its parent's chain.
type dirIgnore struct {
	parent  *dirIgnore
	dir     string // absolute path of the directory
	custom  *IgnoreRules
	ignore  *IgnoreRules
	git     *IgnoreRules
	exclude *IgnoreRules
	hasGit  bool // the directory contains .git: a repository root
	anyGit  bool // this directory or an ancestor is a repository root
}

// loadDirIgnore reads the ignore files of dir. has says whether the directory has an
// entry of that name, so files that do not exist are never opened.
func loadDirIgnore(parent *dirIgnore, dir string, has func(string) bool, n IgnoreFileNames) *dirIgnore {
	d := &dirIgnore{parent: parent, dir: dir}
	read := func(name string) *IgnoreRules {
		if !has(name) {
			return nil
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil
		}
		return parseIgnore(data, false)
	}
	d.custom = read(n.Custom)
	d.ignore = read(".ignore")
	d.git = read(".gitignore")
	if has(".git") {
		d.hasGit = true
		if data, err := os.ReadFile(filepath.Join(gitCommonDir(dir), "info", "exclude")); err == nil {
			d.exclude = parseIgnore(data, false)
		}
	}
	d.anyGit = d.hasGit || (parent != nil && parent.anyGit)
	if parent != nil && !d.hasGit && d.custom == nil && d.ignore == nil && d.git == nil {
		return parent // nothing of its own: share the parent's chain
	}
	return d
}

// gitCommonDir is the git directory holding info/exclude for the repository rooted at
// dir: dir/.git, or for a worktree or submodule (a .git file saying "gitdir: X") the
// directory X, or X's "commondir" when it names one — as ripgrep resolves it.
func gitCommonDir(dir string) string {
	gitPath := filepath.Join(dir, ".git")
	data, err := os.ReadFile(gitPath)
	if err != nil {
		return gitPath // a directory (or unreadable): use it as it is
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return gitPath
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(dir, gitdir)
	}
	if common, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		c := strings.TrimSpace(string(common))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitdir, c)
		}
		return c
	}
	return gitdir
}

// loadParentIgnores builds the chain for the ancestors of root (which ripgrep and fd
// also consult), from the filesystem root down to root's parent.
func loadParentIgnores(root string, n IgnoreFileNames) *dirIgnore {
	var dirs []string
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	var chain *dirIgnore
	for i := len(dirs) - 1; i >= 0; i-- {
		names := map[string]bool{}
		for _, name := range []string{n.Custom, ".ignore", ".gitignore", ".git"} {
			if _, err := os.Lstat(filepath.Join(dirs[i], name)); err == nil {
				names[name] = true
			}
		}
		chain = loadDirIgnore(chain, dirs[i], func(s string) bool { return names[s] }, n)
	}
	return chain
}

// ignored reports whether the entry abs (a directory if IsDir) is excluded by the chain
// starting at d, its containing directory; RequireGit false is fd's --no-require-git. As in the ignore crate, each kind of file is
// decided by the nearest directory with a matching rule, .gitignore and
// .git/info/exclude only count inside a repository and stop at its root, and the kinds
// rank custom > .ignore > .gitignore > exclude.
func (d *dirIgnore) ignored(abs string, isDir bool, s ignoreScope) bool {
	var custom, ign, git, excl IgnoreMatch
	anyGit := d.anyGit || !s.requireGit
	sawGit := false
	for c := d; c != nil; c = c.parent {
		if c.custom == nil && c.ignore == nil && c.git == nil && c.exclude == nil {
			sawGit = sawGit || c.hasGit
			continue
		}
		rel := relUnder(c.dir, abs)
		if custom == matchNone {
			custom = c.custom.match(rel, isDir)
		}
		if ign == matchNone {
			ign = c.ignore.match(rel, isDir)
		}
		if anyGit && !sawGit {
			if git == matchNone {
				git = c.git.match(rel, isDir)
			}
			if excl == matchNone {
				excl = c.exclude.match(rel, isDir)
			}
		}
		sawGit = sawGit || c.hasGit
	}
	for _, m := range []IgnoreMatch{custom, ign, git, excl} {
		if m != matchNone {
			return m == matchIgnore
		}
	}
	if anyGit && s.global != nil {
		if m := s.global.match(relUnder(s.root, abs), isDir); m != matchNone {
			return m == matchIgnore
		}
	}
	if s.explicit != nil {
		return s.explicit.match(relUnder(s.root, abs), isDir) == matchIgnore
	}
	return false
}

// ignoreScope is what applies to a whole walk besides the per-directory files.
type ignoreScope struct {
	requireGit bool         // .gitignore counts only inside a git repository
	global     *IgnoreRules // the user's global gitignore, below the per-directory files
	explicit   *IgnoreRules // fd's own global ignore file, lowest in rank, git or not
	root       string       // where those rules are rooted: the search directory
}

// LoadFdGlobalIgnore reads fd's global ignore file, $XDG_CONFIG_HOME/fd/ignore (default
// ~/.config/fd/ignore). Nil if there is none.
func LoadFdGlobalIgnore() *IgnoreRules {
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil
		}
		xdg = filepath.Join(home, ".config")
	}
	data, err := os.ReadFile(filepath.Join(xdg, "fd", "ignore"))
	if err != nil {
		return nil
	}
	return parseIgnore(data, false)
}

// LoadGlobalGitignore reads the global gitignore ripgrep and fd honour: git's
// core.excludesFile from ~/.gitconfig or $XDG_CONFIG_HOME/git/config, else
// $XDG_CONFIG_HOME/git/ignore (default ~/.config/git/ignore). Nil if there is none.
func LoadGlobalGitignore() *IgnoreRules {
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	// ~/.gitconfig takes precedence over the XDG config, as in git.
	path := ""
	if home != "" {
		path = gitconfigExcludesFile(filepath.Join(home, ".gitconfig"), home)
	}
	if path == "" && xdg != "" {
		path = gitconfigExcludesFile(filepath.Join(xdg, "git", "config"), home)
	}
	if path == "" && xdg != "" {
		path = filepath.Join(xdg, "git", "ignore")
	}
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return parseIgnore(data, false)
}

// excludesFileLine matches core.excludesFile in a git config file, as the ignore crate
// reads it (a line match, not a full config parser).
var excludesFileLine = regexp.MustCompile(`(?im)^\s*excludesfile\s*=\s*"?\s*(\S+?)\s*"?\s*$`)

func gitconfigExcludesFile(cfg, home string) string {
	data, err := os.ReadFile(cfg)
	if err != nil {
		return ""
	}
	m := excludesFileLine.FindSubmatch(data)
	if m == nil {
		return ""
	}
	p := string(m[1])
	if p == "~" || strings.HasPrefix(p, "~/") {
		p = filepath.Join(home, p[1:])
	}
	return p
}

// relUnder returns abs relative to dir, slash-separated (both are clean absolute paths).
func relUnder(dir, abs string) string {
	if dir == "/" {
		return abs[1:]
	}
	if len(abs) > len(dir) && strings.HasPrefix(abs, dir) && abs[len(dir)] == '/' {
		return abs[len(dir)+1:]
	}
	return path.Base(abs)
}

// Override is ripgrep's --glob as pi passes it (leading "./" dropped, "!" kept): a
// gitignore-style rule relative to the search directory. A plain glob whitelists — it
// beats ignore files, and files it does not match are skipped; a "!" glob excludes.
func Override(glob string) (func(rel string, isDir bool) IgnoreMatch, error) {
	neg := strings.HasPrefix(glob, "!")
	body := strings.TrimPrefix(glob, "!")
	for strings.HasPrefix(body, "./") {
		body = body[2:]
	}
	rule, ok, err := parseIgnoreLine(body, false)
	if err != nil {
		shown := body
		if neg {
			shown = "!" + body
		}
		return nil, errors.New("error parsing glob '" + shown + "': " + GlobErrorText(err))
	}
	if !ok { // blank or a comment: matches nothing
		return func(string, bool) IgnoreMatch { return matchNone }, nil
	}
	rule.negate = false
	rs := &IgnoreRules{rules: []ignoreRule{rule}}
	return func(rel string, isDir bool) IgnoreMatch {
		if rs.match(rel, isDir) == matchIgnore {
			if neg {
				return matchIgnore
			}
			return matchWhitelist
		}
		if !neg && !isDir {
			return matchIgnore
		}
		return matchNone
	}, nil
}
