package fsops

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
)

// TestListingsSkipOwnTemps: a write's temporary file, seen mid-replace, never shows up in
// grep, find or ls (pi writes in place, so its listings never have one).
func TestListingsSkipOwnTemps(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("needle\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".a.txt.pi-sbx-0123456789ab.tmp"), []byte("needle\n"), 0o644))
	ctx := context.Background()
	text := func(r result.Result, err error) string {
		require.NoError(t, err)
		return r.Content[0].Text
	}
	assert.Equal(t, "a.txt:1: needle", text(Grep(ctx, dir, GrepArgs{Pattern: "needle"})))
	assert.Equal(t, "a.txt", text(Find(ctx, dir, FindArgs{Pattern: "*"})))
	assert.Equal(t, "a.txt", text(Ls(ctx, dir, LsArgs{})))
}
