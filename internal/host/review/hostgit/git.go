// Package hostgit runs git on the host, on an object store the sandbox's work was
// fetched into, so that nothing in that store or in the workspace runs while it does: no
// hooks, no fsmonitor, no diff or textconv drivers, no attributes from a work tree, no
// replace refs, no system or user configuration, a pager never, and an environment of
// the basics alone (no DOCKER_*, COMPOSE_* or the user's GIT_* variables, which could
// point it at another repository).
// It is, with sbx/, the only package of the host path that starts a process.
package hostgit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// basics are the host variables git keeps: where it finds itself and its helpers.
var basics = []string{"HOME", "PATH", "USER", "LOGNAME", "TMPDIR"}

// safety are the -c settings every git command gets: they override whatever the
// repository's or the user's configuration says.
var safety = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "core.untrackedCache=false",
	"-c", "core.attributesFile=/dev/null",
	"-c", "diff.external=",
	"-c", "core.pager=cat",
	"-c", "protocol.allow=never",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
}

// Identity is the environment naming the author and committer of the commits the
// program writes (start states, collected work, land records): fixed, so a user without
// a git identity can review and land, and plainly not the user. Callers pass it as env
// (a new slice each call, theirs to append to).
func Identity() []string {
	return []string{
		"GIT_AUTHOR_NAME=pi-sbx-backend", "GIT_AUTHOR_EMAIL=pi-sbx-backend@localhost",
		"GIT_COMMITTER_NAME=pi-sbx-backend", "GIT_COMMITTER_EMAIL=pi-sbx-backend@localhost",
	}
}

// Git runs git for one object store.
type Git struct {
	// Program is the git executable (default "git", found on PATH).
	Program string
	// Dir is the git directory (a repository's .git, or a bare repository).
	Dir string
	// WorkTree, when set, is the work tree git may read ignore rules from (check-ignore);
	// without it git takes no directory for one (core.bare=true), so it reads no
	// .gitattributes or .gitignore the sandbox could have written.
	WorkTree string
	// Environ is the host environment the basics are taken from.
	Environ []string
	// MaxOutput caps what one command may print (default 256 MiB): the objects may be
	// the sandbox's, and a command that prints more fails instead of filling memory.
	MaxOutput int64
}

// Env returns the environment of a git child: the basics of g.Environ, the settings
// that keep git from asking, locking, substituting objects or reading pathspec magic,
// then extra (GIT_INDEX_FILE and the like, which the caller sets on purpose; a later
// value of a name wins).
func (g *Git) Env(extra ...string) []string {
	var env []string
	for _, kv := range g.Environ {
		k, _, ok := strings.Cut(kv, "=")
		if ok && contains(basics, k) {
			env = append(env, kv)
		}
	}
	env = append(env,
		"LC_ALL=C",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_NO_REPLACE_OBJECTS=1",
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_LITERAL_PATHSPECS=1",
		"GIT_CONFIG_NOSYSTEM=1",
		// Nor the user's own configuration: no filter, textconv or diff driver is then
		// defined anywhere git looks, whatever an attributes file names.
		"GIT_CONFIG_GLOBAL=/dev/null",
	)
	return append(env, extra...)
}

// Args returns the whole argv after the program: the git directory (and work tree),
// the safety settings, and args.
func (g *Git) Args(args ...string) []string {
	argv := []string{"--git-dir=" + g.Dir, "--no-pager"}
	if g.WorkTree != "" {
		argv = append(argv, "--work-tree="+g.WorkTree, "-c", "core.bare=false")
	} else {
		argv = append(argv, "-c", "core.bare=true")
	}
	argv = append(argv, safety...)
	return append(argv, args...)
}

// Run runs git with args, stdin as its input, and returns its stdout. env adds variables
// (see Env). A failure carries git's stderr.
func (g *Git) Run(ctx context.Context, stdin io.Reader, env []string, args ...string) ([]byte, error) {
	var out bytes.Buffer
	if err := g.Stream(ctx, stdin, &out, env, args...); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Stream is Run writing stdout to w as it comes, at most MaxOutput bytes of it.
func (g *Git) Stream(ctx context.Context, stdin io.Reader, w io.Writer, env []string, args ...string) error {
	prog := g.Program
	if prog == "" {
		prog = "git"
	}
	limit := g.MaxOutput
	if limit <= 0 {
		limit = 256 << 20
	}
	cmd := exec.CommandContext(ctx, prog, g.Args(args...)...)
	cmd.Env = g.Env(env...)
	cmd.Dir = g.Dir
	cmd.Stdin = stdin
	capped := NewCapWriter(w, limit)
	cmd.Stdout = capped
	var stderr bytes.Buffer
	cmd.Stderr = &tail{buf: &stderr, max: 16 << 10}
	err := cmd.Run()
	if capped.Over() {
		return fmt.Errorf("git %s: output over %d bytes", verb(args), limit)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() > 0 {
		return &ExitError{Verb: verb(args), Code: ee.ExitCode(), Stderr: strings.TrimSpace(stderr.String())}
	}
	if err != nil {
		return fmt.Errorf("git %s: %w", verb(args), err)
	}
	return nil
}

// ExitError is git exiting non-zero: its status and its message.
type ExitError struct {
	Verb   string // the subcommand
	Code   int
	Stderr string
}

func (e *ExitError) Error() string {
	if e.Stderr == "" {
		return fmt.Sprintf("git %s: exit status %d", e.Verb, e.Code)
	}
	return fmt.Sprintf("git %s: %s", e.Verb, e.Stderr)
}

// verb is the subcommand, for messages: the first argument that is neither an option
// nor the value of a -c.
func verb(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-c":
			i++
		case !strings.HasPrefix(a, "-"):
			return a
		}
	}
	return strings.Join(args, " ")
}

// tail keeps the first max bytes of stderr (git's message comes first).
type tail struct {
	buf *bytes.Buffer
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	if room := t.max - t.buf.Len(); room > 0 {
		t.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
