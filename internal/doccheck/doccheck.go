// Package doccheck reads the project's Markdown documentation for its tests: the fenced
// blocks (commands and configurations that a test runs or parses), the relative links
// and their anchors, and the `go test` commands the pages tell a reader to run. It is
// test support: nothing of the product links it.
package doccheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Pages returns the documentation pages under root, relative to it: README.md,
// CONTRIBUTING.md, security.md and every Markdown file under docs/, sorted.
func Pages(root string) ([]string, error) {
	pages, err := UserPages(root)
	if err != nil {
		return nil, err
	}
	pages = append(pages, "CONTRIBUTING.md", "security.md")
	sort.Strings(pages)
	return pages, nil
}

// UserPages returns the pages a user reads, whose every command block runs in a test:
// README.md and every Markdown file under docs/, sorted.
func UserPages(root string) ([]string, error) {
	pages := []string{"README.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, fmt.Errorf("listing docs/: %w", err)
	}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			return nil, fmt.Errorf("listing docs/: %w", err)
		}
		pages = append(pages, filepath.ToSlash(rel))
	}
	sort.Strings(pages)
	return pages, nil
}

// Block is one fenced code block of a page.
type Block struct {
	Page string // relative to the root, with slashes
	Line int    // of the opening fence, 1-based
	Lang string // the info string's first word: sh, json, toml, text, …
	// NoRun is the reason given after "no-run" in the info string (```sh no-run: why),
	// for a block that is meant not to run; NoRunMarked says the marker was there at all.
	NoRun       string
	NoRunMarked bool
	// Needs names what the block needs beyond a project and the programs on PATH, given
	// after the language in its info string (```sh release: the files of a release).
	Needs string
	// Config is the name of the `<!-- editor-config: NAME -->` mark just before the
	// block, if any: a client configuration the e2e tests run by that name.
	Config string
	Text   string // the block's lines, each ending in a newline
}

// Runnable reports whether the block is a command a test must run: a shell block not
// marked no-run (a client's configuration, such as a `claude mcp add` line, is run by
// that client's test instead).
func (b Block) Runnable() bool { return b.Lang == "sh" && !b.NoRunMarked && b.Config == "" }

func (b Block) String() string { return fmt.Sprintf("%s:%d (```%s)", b.Page, b.Line, b.Lang) }

const configMark = "<!-- editor-config: "

// Blocks returns every fenced block of the given pages under root, in order.
func Blocks(root string, pages []string) ([]Block, error) {
	var out []Block
	for _, page := range pages {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", page, err)
		}
		var cur *Block
		var text strings.Builder
		mark := ""
		for i, line := range strings.Split(string(data), "\n") {
			switch {
			case cur != nil && strings.TrimSpace(line) == "```":
				cur.Text = text.String()
				out = append(out, *cur)
				cur, mark = nil, ""
				text.Reset()
			case cur != nil:
				text.WriteString(line + "\n")
			case strings.HasPrefix(line, "```"):
				cur = &Block{Page: page, Line: i + 1, Config: mark}
				info := strings.TrimSpace(strings.TrimPrefix(line, "```"))
				var rest string
				cur.Lang, rest, _ = strings.Cut(info, " ")
				if why, ok := strings.CutPrefix(rest, "no-run"); ok {
					cur.NoRunMarked = true
					cur.NoRun = strings.TrimSpace(strings.TrimPrefix(why, ":"))
				} else {
					cur.Needs = strings.TrimSpace(rest)
				}
			case strings.HasPrefix(line, configMark):
				mark = strings.TrimSuffix(strings.TrimPrefix(line, configMark), " -->")
			case strings.TrimSpace(line) != "":
				mark = "" // a mark names the block right after it, nothing further
			}
		}
		if cur != nil {
			return nil, fmt.Errorf("%s:%d: a fenced block is never closed", page, cur.Line)
		}
	}
	return out, nil
}

// Link is one relative link of a page: a file (and maybe an anchor in it), or an anchor
// of the page itself.
type Link struct {
	Page   string
	Line   int
	Target string // as written
}

func (l Link) String() string { return fmt.Sprintf("%s:%d: (%s)", l.Page, l.Line, l.Target) }

// linkRE finds inline links and images: [text](target) or [text](target "title").
var linkRE = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// Links returns the relative links of the given pages (not http(s), mailto or other
// schemes), outside code blocks and code spans.
func Links(root string, pages []string) ([]Link, error) {
	var out []Link
	err := proseLines(root, pages, func(page string, n int, line string) {
		for _, m := range linkRE.FindAllStringSubmatch(stripCodeSpans(line), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			out = append(out, Link{Page: page, Line: n, Target: target})
		}
	})
	return out, err
}

// proseLines calls fn with each line of the pages outside fenced blocks, numbered from 1.
func proseLines(root string, pages []string, fn func(page string, n int, line string)) error {
	for _, page := range pages {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			return fmt.Errorf("reading %s: %w", page, err)
		}
		inBlock := false
		for i, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "```") {
				inBlock = !inBlock
				continue
			}
			if !inBlock {
				fn(page, i+1, line)
			}
		}
	}
	return nil
}

// stripCodeSpans blanks out `code spans` of a line, where brackets are not links.
func stripCodeSpans(line string) string {
	var b strings.Builder
	in := false
	for _, r := range line {
		if r == '`' {
			in = !in
			b.WriteRune(r)
			continue
		}
		if in {
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Check says whether a link resolves: its file exists under root (a directory counts)
// and its anchor, if any, is a heading of that file. It returns a one-line reason when not.
func Check(root string, l Link) error {
	path, anchor, _ := strings.Cut(l.Target, "#")
	file := l.Page
	if path != "" {
		file = filepath.ToSlash(filepath.Join(filepath.Dir(l.Page), path))
	}
	if strings.HasPrefix(file, "../") || file == ".." {
		return fmt.Errorf("%s leads outside the repository", l)
	}
	full := filepath.Join(root, filepath.FromSlash(file))
	info, err := os.Stat(full)
	if err != nil {
		return fmt.Errorf("%s: no such file %s", l, file)
	}
	if anchor == "" {
		return nil
	}
	if info.IsDir() || !strings.HasSuffix(file, ".md") {
		return fmt.Errorf("%s: an anchor into %s, which is not a page", l, file)
	}
	anchors, err := Anchors(full)
	if err != nil {
		return err
	}
	if !anchors[anchor] {
		return fmt.Errorf("%s: %s has no heading #%s", l, file, anchor)
	}
	return nil
}

// Anchors returns the anchors GitHub gives the headings of a Markdown file.
func Anchors(path string) (map[string]bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	anchors := map[string]bool{}
	seen := map[string]int{}
	inBlock := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		slug := Slug(title)
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors, nil
}

// Slug is GitHub's anchor for a heading: lower case, spaces as hyphens, punctuation
// (anything but letters, digits, '-' and '_') dropped.
func Slug(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 0x7f && isLetterOrDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isLetterOrDigit(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// GoTest is one `go test` command a page tells its reader to run.
type GoTest struct {
	Page string
	Line int
	Args []string // after "go test", shell quoting removed, up to the command's end
}

func (g GoTest) String() string {
	return fmt.Sprintf("%s:%d: go test %s", g.Page, g.Line, strings.Join(g.Args, " "))
}

// codeSpanRE finds `code spans`, which may cross a line break.
var codeSpanRE = regexp.MustCompile("`([^`]+)`")

// GoTests returns the `go test` commands of the given pages: in code spans and in the
// lines of fenced blocks.
func GoTests(root string, pages []string) ([]GoTest, error) {
	var out []GoTest
	for _, page := range pages {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", page, err)
		}
		lines := strings.Split(string(data), "\n")
		// Prose with fenced blocks blanked (their lines kept, for line numbers).
		prose := make([]string, len(lines))
		inBlock := false
		for i, line := range lines {
			if strings.HasPrefix(line, "```") {
				inBlock = !inBlock
				continue
			}
			if inBlock {
				for _, cmd := range goTestsIn(line) {
					out = append(out, GoTest{Page: page, Line: i + 1, Args: cmd})
				}
				continue
			}
			if strings.HasPrefix(line, "|") {
				// In a table cell, \| is a | (GitHub reads it so inside code spans too).
				line = strings.ReplaceAll(line, `\|`, "|")
			}
			prose[i] = line
		}
		text := strings.Join(prose, "\n")
		for _, m := range codeSpanRE.FindAllStringSubmatchIndex(text, -1) {
			span := strings.ReplaceAll(text[m[2]:m[3]], "\n", " ")
			line := 1 + strings.Count(text[:m[0]], "\n")
			for _, cmd := range goTestsIn(span) {
				out = append(out, GoTest{Page: page, Line: line, Args: cmd})
			}
		}
	}
	return out, nil
}

// goTestsIn returns the arguments of each `go test` command in s, split as a shell
// would (quotes removed), each ending where the command does (; && || | # or the end).
func goTestsIn(s string) [][]string {
	var out [][]string
	words := shellWords(s)
	for i := 0; i+1 < len(words); i++ {
		if words[i] != "go" || words[i+1] != "test" {
			continue
		}
		var args []string
		for _, w := range words[i+2:] {
			if w == ";" || w == "&&" || w == "||" || w == "|" || strings.HasPrefix(w, "#") || w == "…" || w == "..." {
				break
			}
			args = append(args, w)
		}
		out = append(out, args)
	}
	return out
}

// shellWords splits s into words as a shell does for simple commands: quotes group and
// are removed, and the operators ; && || | stand as words of their own.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	have := false
	flush := func() {
		if have {
			words = append(words, cur.String())
		}
		cur.Reset()
		have = false
	}
	var quote rune
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, have = r, true
		case r == ' ' || r == '\t':
			flush()
		case r == ';':
			flush()
			words = append(words, ";")
		case r == '&' || r == '|':
			flush()
			op := string(r)
			if i+1 < len(rs) && rs[i+1] == r {
				op += string(r)
				i++
			}
			words = append(words, op)
		case r == '\\' && i+1 < len(rs):
			i++
			cur.WriteRune(rs[i])
			have = true
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	flush()
	return words
}

// TestRef is a test (benchmark, fuzz target) a page names in a code span: `TestName`,
// or `dir/TestName` with the directory of its package relative to the root.
type TestRef struct {
	Page string
	Line int
	Dir  string // "" when the page gives the name alone
	Name string
}

func (r TestRef) String() string {
	if r.Dir == "" {
		return fmt.Sprintf("%s:%d: %s", r.Page, r.Line, r.Name)
	}
	return fmt.Sprintf("%s:%d: %s/%s", r.Page, r.Line, r.Dir, r.Name)
}

// testRefRE is a code span holding one test's name, maybe after its package's directory
// (a name may end in * for a family of tests).
var testRefRE = regexp.MustCompile("`((?:[a-z0-9_.-]+/)*)((?:Test|Benchmark|Fuzz)[A-Z][A-Za-z0-9_]*\\*?)`")

// TestRefs returns the tests the pages name in code spans outside fenced blocks.
func TestRefs(root string, pages []string) ([]TestRef, error) {
	var out []TestRef
	err := proseLines(root, pages, func(page string, n int, line string) {
		for _, m := range testRefRE.FindAllStringSubmatch(line, -1) {
			out = append(out, TestRef{Page: page, Line: n, Dir: strings.TrimSuffix(m[1], "/"), Name: m[2]})
		}
	})
	return out, err
}
