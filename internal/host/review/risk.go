package review

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/hostgit"
)

// byName are files that a tool on the host runs, or reads to decide what to run, by
// their base name, with why.
var byName = map[string]string{
	".envrc":                  "direnv runs it when you enter the directory",
	".env":                    "loaded into the environment (direnv, dotenv, compose)",
	"Makefile":                "make runs it",
	"makefile":                "make runs it",
	"GNUmakefile":             "make runs it",
	"justfile":                "just runs it",
	"Justfile":                "just runs it",
	".justfile":               "just runs it",
	"Taskfile.yml":            "task runs it",
	"Taskfile.yaml":           "task runs it",
	"Rakefile":                "rake runs it",
	"CMakeLists.txt":          "cmake runs it",
	"build.gradle":            "gradle runs it",
	"build.gradle.kts":        "gradle runs it",
	"settings.gradle":         "gradle runs it",
	"settings.gradle.kts":     "gradle runs it",
	"gradlew":                 "the gradle wrapper: you run it",
	"mvnw":                    "the maven wrapper: you run it",
	"pom.xml":                 "maven runs its plugins",
	"build.rs":                "cargo runs it on build",
	"setup.py":                "pip runs it on install",
	"conftest.py":             "pytest runs it",
	"noxfile.py":              "nox runs it",
	"tox.ini":                 "tox runs its commands",
	".pre-commit-config.yaml": "pre-commit runs its hooks",
	".gitattributes":          "names the filters and diff drivers git runs",
	".gitmodules":             "submodule URLs and update commands git uses",
	".lfsconfig":              "git-lfs reads it",
	".npmrc":                  "npm's settings (scripts, registries)",
	".yarnrc":                 "yarn's settings",
	".yarnrc.yml":             "yarn's settings (plugins it runs)",
	".pnpmfile.cjs":           "pnpm runs it",
}

// byDir are directories whose files something on the host runs.
var byDir = []struct{ prefix, why string }{
	{".husky/", "husky's git hooks"},
	{"node_modules/.bin/", "on PATH in npm scripts"},
	{".vscode/", "VS Code runs its tasks and reads its settings"},
	{".idea/", "JetBrains IDEs run its run configurations"},
	{".devcontainer/", "dev containers run its commands"},
}

// classify sets each file's Risks.
func classify(ctx context.Context, g *hostgit.Git, c Changes, files []File) error {
	ignored, err := ignoredPaths(ctx, g, c, files)
	if err != nil {
		return err
	}
	blobs, err := readRiskBlobs(ctx, g, files)
	if err != nil {
		return err
	}
	for i := range files {
		f := &files[i]
		if f.NewMode == "" {
			continue // a deletion runs nothing
		}
		f.Risks = append(f.Risks, pathRisks(f.Path)...)
		if f.NewMode == ModeExec && f.OldMode != ModeExec {
			f.Risks = append(f.Risks, "gains +x")
		}
		if f.NewMode == ModeGitlink {
			f.Risks = append(f.Risks, "a submodule: git checks out and may run what it names")
		}
		if f.NewMode == ModeSymlink {
			if why := linkRisk(*f, blobs[f.NewID]); why != "" {
				f.Risks = append(f.Risks, why)
			}
		}
		if path.Base(f.Path) == "package.json" {
			if why := packageRisk(*f, blobs); why != "" {
				f.Risks = append(f.Risks, why)
			}
		}
		if ignored[f.Path] && f.Status != Modified {
			f.Risks = append(f.Risks, "ignored by .gitignore: git status never shows it")
		}
	}
	return nil
}

// pathRisks are the reasons a file at p would run by its name and place.
func pathRisks(p string) []string {
	var out []string
	for _, part := range strings.Split(p, "/") {
		if part == ".git" {
			out = append(out, "inside .git: git runs its hooks and obeys its config")
			break
		}
	}
	base := path.Base(p)
	if why, ok := byName[base]; ok {
		out = append(out, why)
	} else if strings.HasSuffix(base, ".mk") {
		out = append(out, "make includes it")
	} else if strings.HasPrefix(base, ".env.") {
		out = append(out, "loaded into the environment (dotenv)")
	}
	for _, d := range byDir {
		if strings.HasPrefix(p, d.prefix) || strings.Contains(p, "/"+d.prefix) {
			out = append(out, d.why)
		}
	}
	if strings.HasPrefix(p, ".github/workflows/") {
		out = append(out, "CI runs it")
	}
	return out
}

// linkRisk flags a symlink (its target read) whose target leaves the workspace or
// enters .git.
func linkRisk(f File, target []byte) string {
	t := string(target)
	if path.IsAbs(t) {
		return "symlink out of the workspace (to " + t + ")"
	}
	resolved := path.Join(path.Dir(f.Path), t)
	if resolved == ".." || strings.HasPrefix(resolved, "../") {
		return "symlink out of the workspace (to " + t + ")"
	}
	if resolved == ".git" || strings.HasPrefix(resolved, ".git/") {
		return "symlink into .git (to " + t + ")"
	}
	return ""
}

// packageJSON is what of a package.json npm, yarn or pnpm run.
type packageJSON struct {
	Scripts map[string]any `json:"scripts"`
	Bin     any            `json:"bin"`
	Config  any            `json:"config"`
}

// packageRisk flags a package.json whose scripts (or bin, or config) changed; blobs
// holds its contents (readRiskBlobs).
func packageRisk(f File, blobs map[string][]byte) string {
	load := func(id string) (packageJSON, bool) {
		var p packageJSON
		if !readsPackage(f, id) {
			return p, true
		}
		return p, json.Unmarshal(blobs[id], &p) == nil
	}
	old, _ := load(f.OldID)
	cur, ok := load(f.NewID)
	switch {
	case !ok:
		return "package.json that is not valid JSON (npm may read it otherwise)"
	case !reflect.DeepEqual(old.Scripts, cur.Scripts):
		return "package.json scripts changed: npm runs them"
	case !reflect.DeepEqual(old.Bin, cur.Bin) || !reflect.DeepEqual(old.Config, cur.Config):
		return "package.json bin or config changed"
	}
	return ""
}

// readsPackage reports whether packageRisk reads blob id of package.json f: not when
// there is none, nor when f was a symlink.
func readsPackage(f File, id string) bool {
	return id != "" && f.OldMode != ModeSymlink
}

// Bounds of what classify reads of one blob: the objects are the sandbox's.
const (
	maxLinkTarget  = 4096
	maxPackageJSON = 8 << 20
)

// readRiskBlobs reads, with one `git cat-file --batch`, the contents classify looks
// into: the targets of the symbolic links files add and the package.json files on both
// sides. A blob over its bound fails the listing.
func readRiskBlobs(ctx context.Context, g *hostgit.Git, files []File) (map[string][]byte, error) {
	limits := map[string]int64{}
	var ids, names []string
	want := func(id, name string, limit int64) {
		if _, ok := limits[id]; !ok {
			ids, names = append(ids, id), append(names, name)
		}
		limits[id] = max(limits[id], limit)
	}
	for _, f := range files {
		if f.NewMode == "" {
			continue
		}
		if f.NewMode == ModeSymlink {
			want(f.NewID, "the symlink "+f.Path, maxLinkTarget)
		}
		if path.Base(f.Path) == "package.json" {
			for _, id := range []string{f.OldID, f.NewID} {
				if readsPackage(f, id) {
					want(id, f.Path, maxPackageJSON)
				}
			}
		}
	}
	blobs := make(map[string][]byte, len(ids))
	err := catBlobs(ctx, g, ids, func(i int, size int64, content io.Reader) error {
		if size > limits[ids[i]] {
			return fmt.Errorf("reading %s: blob %s is over %d bytes", names[i], ids[i], limits[ids[i]])
		}
		b, err := io.ReadAll(content)
		if err != nil {
			return fmt.Errorf("reading %s: %w", names[i], err)
		}
		blobs[ids[i]] = b
		return nil
	})
	return blobs, err
}

// ignoredPaths asks git which of the added paths a git workspace's ignore rules hide (its
// .gitignore files and .git/info/exclude), read from the host's tree and repository.
func ignoredPaths(ctx context.Context, g *hostgit.Git, c Changes, files []File) (map[string]bool, error) {
	hostRepo := filepath.Join(c.Root, ".git")
	if fi, err := os.Stat(hostRepo); err != nil || !fi.IsDir() {
		return nil, nil // not a git workspace: nothing is "untracked"
	}
	var in bytes.Buffer
	for _, f := range files {
		if f.NewMode != "" {
			in.WriteString(f.Path)
			in.WriteByte(0)
		}
	}
	if in.Len() == 0 {
		return nil, nil
	}
	wt := *g
	wt.Dir, wt.WorkTree = hostRepo, c.Root // the host's rules; check-ignore takes no pathspec magic
	out, err := wt.Run(ctx, &in, []string{"GIT_LITERAL_PATHSPECS=0"}, "check-ignore", "--no-index", "-z", "--stdin")
	var ee *hostgit.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.Code == 1) { // 1: none is ignored
		return nil, fmt.Errorf("checking the ignore rules: %w", err)
	}
	set := map[string]bool{}
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 {
			set[string(p)] = true
		}
	}
	return set, nil
}

// blob reads one object's content, at most limit bytes.
func blob(ctx context.Context, g *hostgit.Git, id string, limit int64) ([]byte, error) {
	capped := *g
	capped.MaxOutput = limit
	return capped.Run(ctx, nil, nil, "cat-file", "blob", id)
}

// sortFlaggedFirst puts the flagged files first; each group stays in path order.
func sortFlaggedFirst(files []File) {
	sort.SliceStable(files, func(i, j int) bool { return files[i].Flagged() && !files[j].Flagged() })
}
