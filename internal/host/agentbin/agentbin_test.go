package agentbin

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	_, err := z.Write(b)
	require.NoError(t, err)
	require.NoError(t, z.Close())
	return buf.Bytes()
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func TestFind(t *testing.T) {
	self := []byte("the running executable")
	embedded := []byte("the embedded arm64 agent")
	beside := []byte("the arm64 agent beside it")
	tests := []struct {
		name         string
		goos, goarch string
		embed        bool
		besideFile   bool
		want         []byte // nil: no agent
		wantFrom     string // "self", "beside" or "embedded"
	}{
		{"a linux host of the VM's architecture is its own agent", "linux", "arm64", true, true, self, "self"},
		{"embedded before beside", "darwin", "arm64", true, true, embedded, "embedded"},
		{"embedded", "darwin", "arm64", true, false, embedded, "embedded"},
		{"beside, when none is embedded", "darwin", "arm64", false, true, beside, "beside"},
		{"another linux architecture is not its own agent", "linux", "amd64", false, true, beside, "beside"},
		{"none", "darwin", "arm64", false, false, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			exe := filepath.Join(dir, "pi-sbx-backend")
			require.NoError(t, os.WriteFile(exe, self, 0o755))
			besidePath := filepath.Join(dir, "pi-sbx-backend-linux-arm64")
			if tc.besideFile {
				require.NoError(t, os.WriteFile(besidePath, beside, 0o755))
			}
			f := &Finder{Executable: func() (string, error) { return exe, nil }, GOOS: tc.goos, GOARCH: tc.goarch}
			if tc.embed {
				f.Embedded = fstest.MapFS{"linux-arm64.gz": {Data: gz(t, embedded)}}
			}
			a, err := f.Find("arm64")
			if tc.want == nil {
				require.ErrorIs(t, err, ErrNoAgent)
				assert.ErrorContains(t, err, "GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -o "+besidePath)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, map[string]string{"self": exe, "beside": besidePath, "embedded": "embedded"}[tc.wantFrom], a.From)
			assert.Equal(t, "arm64", a.Arch)
			assert.Equal(t, sum(tc.want), a.SHA256)
			assert.Equal(t, int64(len(tc.want)), a.Size)
			r, err := a.Open()
			require.NoError(t, err)
			got, err := io.ReadAll(r)
			require.NoError(t, err)
			require.NoError(t, r.Close())
			assert.Equal(t, tc.want, got, "Open gives the binary as installed (uncompressed)")
		})
	}
}

func TestFindRemembers(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "pi-sbx-backend")
	require.NoError(t, os.WriteFile(exe, []byte("v1"), 0o755))
	f := &Finder{Executable: func() (string, error) { return exe, nil }, GOOS: "linux", GOARCH: "amd64"}
	a, err := f.Find("amd64")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(exe, []byte("v2"), 0o755))
	b, err := f.Find("amd64")
	require.NoError(t, err)
	assert.Equal(t, a.SHA256, b.SHA256, "hashed once per Finder")
}

func TestCorruptEmbedded(t *testing.T) {
	f := &Finder{Executable: os.Executable, GOOS: "darwin", GOARCH: "arm64",
		Embedded: fstest.MapFS{"linux-arm64.gz": {Data: []byte("not gzip")}}}
	_, err := f.Find("arm64")
	assert.ErrorContains(t, err, "reading the embedded agent for linux/arm64")
}
