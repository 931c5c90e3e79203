package hostgit

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEnv(t *testing.T) {
	g := &Git{Environ: []string{"HOME=/h", "PATH=/bin", "DOCKER_HOST=unix:///x", "COMPOSE_FILE=c", "GIT_DIR=/elsewhere",
		"GIT_WORK_TREE=/w", "GIT_CONFIG_GLOBAL=/evil", "GIT_SSH_COMMAND=evil", "SECRET=s", "LANG=fr_FR.UTF-8"}}
	env := g.Env("GIT_INDEX_FILE=/tmp/i", "GIT_LITERAL_PATHSPECS=0")
	assert.Equal(t, []string{"HOME=/h", "PATH=/bin", "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0",
		"GIT_NO_REPLACE_OBJECTS=1", "GIT_ATTR_NOSYSTEM=1", "GIT_LITERAL_PATHSPECS=1", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_INDEX_FILE=/tmp/i", "GIT_LITERAL_PATHSPECS=0"}, env)
}

func TestArgs(t *testing.T) {
	cases := []struct {
		g    Git
		want []string
	}{
		{Git{Dir: "/r/.git"}, []string{"--git-dir=/r/.git", "--no-pager", "-c", "core.bare=true"}},
		{Git{Dir: "/r/.git", WorkTree: "/r"}, []string{"--git-dir=/r/.git", "--no-pager", "--work-tree=/r", "-c", "core.bare=false"}},
	}
	for _, tc := range cases {
		args := tc.g.Args("diff-tree", "x")
		assert.Equal(t, tc.want, args[:len(tc.want)])
		assert.Equal(t, []string{"diff-tree", "x"}, args[len(args)-2:])
		joined := strings.Join(args, " ")
		for _, s := range []string{"core.hooksPath=/dev/null", "core.fsmonitor=false", "core.attributesFile=/dev/null", "diff.external="} {
			assert.Contains(t, joined, s)
		}
	}
}

// TestRun: a user's GIT_DIR cannot redirect git, output past the cap fails, and git's
// exit status and message come back as ExitError.
func TestRun(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	out, err := exec.Command("git", "init", "-q", "--bare", dir).CombinedOutput()
	require.NoError(t, err, string(out))
	other := t.TempDir()
	g := &Git{Dir: dir, Environ: append(os.Environ(), "GIT_DIR="+other)}
	got, err := g.Run(context.Background(), nil, nil, "rev-parse", "--absolute-git-dir")
	require.NoError(t, err)
	want, _ := filepath.EvalSymlinks(dir)
	assert.Equal(t, want, strings.TrimSpace(string(got)))

	g.MaxOutput = 10
	_, err = g.Run(context.Background(), strings.NewReader(strings.Repeat("x", 100)), nil, "hash-object", "--stdin", "-t", "blob")
	assert.ErrorContains(t, err, "git hash-object: output over 10 bytes")

	g.MaxOutput = 0
	_, err = g.Run(context.Background(), nil, nil, "cat-file", "blob", strings.Repeat("0", 40))
	var ee *ExitError
	require.True(t, errors.As(err, &ee), "%v", err)
	assert.Equal(t, 128, ee.Code)
	assert.Contains(t, ee.Error(), "git cat-file: fatal:")
}

func TestVerb(t *testing.T) {
	for args, want := range map[string]string{
		"diff-tree -r":                       "diff-tree",
		"-c transfer.fsckObjects=true fetch": "fetch",
		"--no-pager -c a=b -c c=d cat-file":  "cat-file",
	} {
		assert.Equal(t, want, verb(strings.Fields(args)), args)
	}
}
