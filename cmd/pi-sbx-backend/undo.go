package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/agentlink"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/journal"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/journal/recorder"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/keep"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/session"
)

// undoSource is a work source whose journal undo can act on.
type undoSource interface {
	Record(name string) (keep.Record, error)
	JournalFile(r keep.Record) journal.Journal
	ClientFor(r keep.Record) *sbx.Client
}

func undoCommand(open openWork) command {
	var w workFlags
	var to string
	var last int
	return command{
		name:     "undo",
		synopsis: "[--workspace DIR] [--to CALL | --last N]",
		summary:  "reset a review-mode sandbox's workspace to an earlier checkpoint of its journal",
		help: `Resets the review-mode sandbox's workspace to the checkpoint after call CALL (--to, a
number of review --calls; 0 is the workspace before the first call), or to the one before
the last N checkpoints (--last N; default 1). The files the journal holds (tracked and
untracked ones that are not ignored) are written back or removed; ignored files and the
sandbox's .git are left alone. The workspace as it was is a checkpoint first and the undo
one more, so an undo can be undone (undo --last 1 again). Processes in the sandbox that
hold files or a working directory in the workspace are named first: they may write
again after it. The host workspace is not touched.`,
		env: reviewEnv,
		flags: func(fs *flag.FlagSet) {
			w.define(fs)
			fs.StringVar(&to, "to", "", "the `CALL` whose checkpoint to restore")
			fs.IntVar(&last, "last", 0, "undo the last `N` checkpoints")
		},
		run: func(ctx context.Context, std stdio, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			if to != "" && last != 0 {
				return usagef("--to and --last exclude each other")
			}
			if last < 0 {
				return usagef("--last %d: want N ≥ 1", last)
			}
			if to == "" && last == 0 {
				last = 1
			}
			src, c, err := w.collect(ctx, open)
			if err != nil {
				return err
			}
			us, ok := src.(undoSource)
			if !ok {
				return fmt.Errorf("the work of %s has no journal", c.Sandbox)
			}
			rec, err := us.Record(c.Sandbox)
			if err != nil {
				return err
			}
			jf := us.JournalFile(rec)
			entries, err := jf.Entries()
			if err != nil {
				return err
			}
			target, err := journal.Target(entries, to, last)
			if errors.Is(err, journal.ErrEmpty) {
				return fmt.Errorf("sandbox %s: %w", c.Sandbox, err)
			} else if err != nil {
				return usagef("%v", err)
			}
			client := us.ClientFor(rec)
			if _, err := client.Lookup(ctx, rec.Sandbox); errors.Is(err, sbx.ErrMissing) {
				return fmt.Errorf("sandbox %s is gone: its workspace cannot be reset (its work is kept: review, land)", rec.Sandbox)
			} else if err != nil {
				return fmt.Errorf("looking up sandbox %s: %w", rec.Sandbox, err)
			}
			st, err := hostSettings()
			if err != nil {
				return err
			}
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("finding this executable: %w", err)
			}
			files, err := session.HostFiles(client, exe)
			if err != nil {
				return err
			}
			if box, err := client.Lookup(ctx, rec.Sandbox); err == nil {
				if err := sbx.CheckHostFiles(files, box.Mounts()); err != nil {
					return fmt.Errorf("sandbox %s: %w", rec.Sandbox, err)
				}
			}
			ch := &agentlink.Channel{
				Target: agentlink.Target{
					Sbx:       client,
					Sandbox:   func(context.Context) (string, error) { return rec.Sandbox, nil },
					Installer: &agentlink.Installer{Sbx: client, Version: version},
					Env:       st.VMEnv(),
					Cwd:       rec.Root,
				},
				Version:    version,
				Stderr:     std.err,
				StartTries: 1,
			}
			defer ch.Close()
			r := &recorder.Recorder{Journal: jf, VM: keep.JournalVM(rec), Agent: ch}
			e, err := r.Undo(ctx, target, "pi-sbx-backend undo", func(h recorder.Holder) { fmt.Fprintln(std.err, recorder.Warning(h)) })
			if err != nil {
				return fmt.Errorf("undo in %s: %w", rec.Sandbox, err)
			}
			fmt.Fprintln(std.out, journal.Undone(rec.Sandbox, target, e))
			return nil
		},
	}
}
