package keep

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/review"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/journal"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// JournalRef is where checkpoint n of sandbox name is kept in its private store.
func JournalRef(name string, n int) string { return journalPrefix(name) + strconv.Itoa(n) }

func journalPrefix(name string) string { return refPrefix + name + "/journal/" }

// Journal returns sandbox r's journal file.
func (k *Keeper) Journal(r Record) journal.Journal { return journal.Open(k.Store.Dir, r.Sandbox) }

// JournalVM is where r's checkpoints are made in the VM.
func JournalVM(r Record) journal.VM { return journal.VMFor(r.Sandbox, r.Root, r.Kind == KindClone) }

// fetchJournal brings the journal's checkpoints that the store lacks from the sandbox
// (as JournalRef), with what the last fetched one has left out of the bundle.
//
// Nothing is asked of the sandbox (one exec less per collect) when the journal records
// no checkpoint the store lacks.
func (k *Keeper) fetchJournal(ctx context.Context, r Record) error {
	have := k.lastJournal(ctx, r)
	if entries, err := k.Journal(r).Entries(); err == nil && (len(entries) == 0 || entries[len(entries)-1].Commit == have) {
		return nil
	}
	vm := JournalVM(r)
	argv := []string{"sh", "-c", collectScript, "pi-sbx-collect", r.Root, "journal", vm.GitDir, have}
	bundle, err := k.download(ctx, r, "pi-sbx-journal-*.bundle", argv, sbx.ExecOpts{Workdir: "/"})
	if err != nil {
		return err
	}
	defer os.Remove(bundle.Name())
	fi, err := bundle.Stat()
	bundle.Close()
	if err != nil || fi.Size() == 0 {
		return err // no checkpoint, or none new
	}
	if _, err := k.Git.do(ctx, run{dir: r.GitDir, args: []string{"fetch", "-q", "--no-tags", "--no-write-fetch-head",
		"--no-recurse-submodules", bundle.Name(), "+refs/pi-sbx/journal/*:" + journalPrefix(r.Sandbox) + "*"}}); err != nil {
		return fmt.Errorf("fetching the journal's bundle: %w", err)
	}
	return nil
}

// forgetJournal drops the journal of an earlier sandbox of r's name: its records and
// the checkpoints' refs in the store (a new sandbox numbers its own from 0).
func (k *Keeper) forgetJournal(ctx context.Context, r Record) error {
	if err := k.Journal(r).Remove(); err != nil {
		return err
	}
	out, err := k.Git.do(ctx, run{dir: r.GitDir, args: []string{"for-each-ref", "--format=delete %(refname)", journalPrefix(r.Sandbox)}})
	if err != nil || strings.TrimSpace(out) == "" {
		return err
	}
	if _, err := k.Git.do(ctx, run{dir: r.GitDir, args: []string{"update-ref", "--stdin"}, stdin: strings.NewReader(out)}); err != nil {
		return fmt.Errorf("dropping an earlier journal of %s: %w", r.Sandbox, err)
	}
	return nil
}

// lastJournal is the newest checkpoint the store has ("" for none).
func (k *Keeper) lastJournal(ctx context.Context, r Record) string {
	out, err := k.Git.do(ctx, run{dir: r.GitDir, args: []string{"for-each-ref", "--format=%(refname:lstrip=-1) %(objectname)", journalPrefix(r.Sandbox)}})
	if err != nil {
		return ""
	}
	best, id := -1, ""
	for _, line := range strings.Split(out, "\n") {
		n, obj, ok := strings.Cut(line, " ")
		if i, err := strconv.Atoi(n); ok && err == nil && i > best {
			best, id = i, obj
		}
	}
	return id
}

// Journal returns the journal of the work c (the entries recorded for its sandbox).
func (w *Work) Journal(c review.Changes) ([]journal.Entry, error) {
	r, err := w.keeper.Store.Load(c.Sandbox)
	if err != nil {
		return nil, fmt.Errorf("the review record of %s: %w", c.Sandbox, err)
	}
	return w.keeper.Journal(r).Entries()
}

// Record returns the review record of sandbox name.
func (w *Work) Record(name string) (Record, error) { return w.keeper.Store.Load(name) }

// JournalFile returns the journal file of record r.
func (w *Work) JournalFile(r Record) journal.Journal { return w.keeper.Journal(r) }

// ClientFor returns the sbx client that reaches r's sandbox (--cloud for a cloud one).
func (w *Work) ClientFor(r Record) *sbx.Client { return w.keeper.clientFor(r) }
