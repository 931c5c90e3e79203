package keep

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/journal"
)

// TestForgetJournal: a new sandbox of an earlier one's name starts its journal afresh:
// the earlier records and the checkpoints' refs in the store are dropped, nothing else.
func TestForgetJournal(t *testing.T) {
	ctx := context.Background()
	k := &Keeper{Git: &Git{Environ: os.Environ()}, Store: Store{Dir: t.TempDir()}}
	r := Record{Sandbox: "box", GitDir: k.Store.GitDir("box")}
	require.NoError(t, k.initStore(ctx, r.GitDir, ""))
	c, err := k.Git.do(ctx, run{dir: r.GitDir, args: []string{"commit-tree", "-m", "x", "4b825dc642cb6eb9a060e54bf8d69288fbee4904"}})
	require.NoError(t, err)
	for _, ref := range []string{JournalRef("box", 0), JournalRef("box", 12), BaseRef("box"), JournalRef("other", 1)} {
		_, err := k.Git.do(ctx, run{dir: r.GitDir, args: []string{"update-ref", ref, strings.TrimSpace(c)}})
		require.NoError(t, err)
	}
	require.NoError(t, k.Journal(r).Append(journal.Entry{Tool: journal.StartTool, Commit: strings.TrimSpace(c)}))
	assert.Equal(t, strings.TrimSpace(c), k.lastJournal(ctx, r))

	require.NoError(t, k.forgetJournal(ctx, r))
	refs, err := k.Git.do(ctx, run{dir: r.GitDir, args: []string{"for-each-ref", "--format=%(refname)"}})
	require.NoError(t, err)
	assert.Equal(t, []string{BaseRef("box"), JournalRef("other", 1)}, strings.Fields(refs))
	entries, err := k.Journal(r).Entries()
	require.NoError(t, err)
	assert.Empty(t, entries)
	assert.Empty(t, k.lastJournal(ctx, r))
	require.NoError(t, k.forgetJournal(ctx, r), "nothing to drop is no error")
}
