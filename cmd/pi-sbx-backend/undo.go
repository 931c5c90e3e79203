package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

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
			if len(entries) == 0 {
				return fmt.Errorf("the journal of %s is empty: no call has changed the workspace", c.Sandbox)
			}
			var target journal.Entry
			if to != "" {
				n, err := strconv.Atoi(to)
				found := false
				for _, e := range entries {
					if err == nil && e.N == n {
						target, found = e, true
					}
				}
				if !found {
					return usagef("--to %s: the journal has checkpoints 0 to %d", to, entries[len(entries)-1].N)
				}
			} else {
				if last >= len(entries) {
					return usagef("--last %d: the journal has %d checkpoint(s) after the start", last, len(entries)-1)
				}
				target = entries[len(entries)-1-last]
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
			holders, err := r.Holders(ctx)
			if err != nil {
				return err
			}
			for _, h := range holders {
				fmt.Fprintf(std.err, "warning: process %d (%s) holds %s in the workspace: it may change it again after the undo\n", h.PID, h.Command, strings.Join(h.Files, ", "))
			}
			what := map[string]string{"to": strconv.Itoa(target.N)}
			e, err := r.Restore(ctx, target, recorder.Call{Client: "pi-sbx-backend undo", Tool: "undo", Args: what})
			if err != nil {
				return fmt.Errorf("undo in %s: %w", rec.Sandbox, err)
			}
			fmt.Fprintf(std.out, "reset the workspace of %s to checkpoint %d (after %s); this undo is checkpoint %d: undo --last 1 takes it back\n",
				rec.Sandbox, target.N, describe(target), e.N)
			return nil
		},
	}
}

// describe names the call of a checkpoint.
func describe(e journal.Entry) string {
	if e.N == 0 {
		return "nothing: the start"
	}
	s := e.Tool
	if e.CallID != "" {
		s += " " + e.CallID
	}
	return s
}
