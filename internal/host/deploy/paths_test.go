package deploy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// confineFixture is a workspace with symlinks inside and out, next to a secret.
func confineFixture(t testing.TB) (ws, outside string) {
	root := t.TempDir()
	ws = filepath.Join(root, "ws")
	outside = filepath.Join(root, "secret")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "app", "sub"), 0o755))
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "key"), []byte("k"), 0o600))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "out")))
	require.NoError(t, os.Symlink("app/sub", filepath.Join(ws, "in")))
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(ws, "app", "passwd")))
	require.NoError(t, os.Symlink("loop", filepath.Join(ws, "loop")))
	return ws, outside
}

func TestConfine(t *testing.T) {
	ws, outside := confineFixture(t)
	ok := map[string]string{
		".":                  ws,
		"app":                filepath.Join(ws, "app"),
		"app/sub/":           filepath.Join(ws, "app/sub"),
		"app/new/file":       filepath.Join(ws, "app/new/file"),
		ws + "/app":          filepath.Join(ws, "app"),
		"app/../app/sub":     filepath.Join(ws, "app/sub"),
		"in":                 filepath.Join(ws, "app/sub"),
		"in/missing/x":       filepath.Join(ws, "app/sub/missing/x"),
		"./app//sub":         filepath.Join(ws, "app/sub"),
		"Dockerfile":         filepath.Join(ws, "Dockerfile"),
		"app/a name with sp": filepath.Join(ws, "app/a name with sp"),
	}
	for in, want := range ok {
		got, err := Confine(ws, in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	bad := map[string]string{
		"..":                  "outside the workspace",
		"../secret":           "outside the workspace",
		"app/../../secret":    "outside the workspace",
		outside:               "outside the workspace",
		"/etc":                "outside the workspace",
		"out":                 "outside the workspace",
		"out/key":             "outside the workspace",
		"out/new":             "outside the workspace",
		"app/passwd":          "outside the workspace",
		"loop":                "cannot be resolved",
		"-v":                  "option injection",
		"--volume=/:/host":    "option injection",
		"app\n--privileged":   "control character",
		"app\x00":             "control character",
		"app\r":               "control character",
		"":                    "empty",
		filepath.Dir(ws):      "outside the workspace",
		ws + "/../secret/key": "outside the workspace",
	}
	for in, why := range bad {
		_, err := Confine(ws, in)
		require.ErrorIs(t, err, ErrRefused, "%q", in)
		assert.Contains(t, err.Error(), why, "%q", in)
	}
}

func TestVolume(t *testing.T) {
	ws, _ := confineFixture(t)
	d := &Deployer{Config: Config{Workspace: ws}}
	got, err := d.volume("app:/srv")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(ws, "app")+":/srv", got)
	got, err = d.volume("./app:/srv:rw")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(ws, "app")+":/srv:rw", got)
	got, err = d.volume("cache:/cache")
	require.NoError(t, err, "a bare name is a workspace directory")
	assert.Equal(t, filepath.Join(ws, "cache")+":/cache", got)
	ro := &Deployer{Config: Config{Workspace: ws, ReadOnly: true}}
	for _, in := range []string{"app:/srv", "app:/srv:rw"} {
		got, err = ro.volume(in)
		require.NoError(t, err)
		assert.Equal(t, filepath.Join(ws, "app")+":/srv:ro", got, "read-only mode makes workspace binds :ro")
	}
	for _, bad := range []string{"/etc:/etc", "../x:/x", "out:/x", "app", "app:rel", "app:/x:rwx", "app:/x,readonly=false",
		"-v:/x", "app:/x:ro:z", "/:/host", "app:/../etc", "app:/x\n"} {
		_, err := d.volume(bad)
		assert.ErrorIs(t, err, ErrRefused, bad)
	}
}

// FuzzConfine: whatever the input, Confine either refuses or returns a clean absolute
// path inside the workspace whose real location (symlinks resolved) is inside too.
func FuzzConfine(f *testing.F) {
	for _, s := range []string{".", "..", "app", "out/key", "in/../../secret", "/etc", "-x", "a\nb", "in/x/../../..", "app/passwd", "//", "loop/x"} {
		f.Add(s)
	}
	ws, _ := confineFixture(f)
	realWS, err := filepath.EvalSymlinks(ws)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, in string) {
		got, err := Confine(ws, in)
		if err != nil {
			return
		}
		if !filepath.IsAbs(got) || filepath.Clean(got) != got || !within(ws, got) {
			t.Fatalf("Confine(%q) = %q: not a clean path in the workspace", in, got)
		}
		if strings.HasPrefix(in, "-") || strings.ContainsAny(in, "\r\n\x00") {
			t.Fatalf("Confine(%q) accepted an injection", in)
		}
		real, err := realpathWithin(got)
		if err == nil && !within(realWS, real) {
			t.Fatalf("Confine(%q) = %q resolves to %q outside the workspace", in, got, real)
		}
	})
}
