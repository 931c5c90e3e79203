package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/lifecycle"
)

type gcOptions struct {
	hours  float64
	dryRun bool
	force  bool
}

func gcCommand() command {
	var o gcOptions
	return command{
		name:     "gc",
		synopsis: "[--hours N] [--dry-run] [--force]",
		summary:  "remove stale pi-sbx-* sandboxes (stopped, owner gone, older than N hours)",
		help: `Removes pi-sbx-* sandboxes that sbx lists as stopped, whose owner record (kept by the
session that created them) shows the owner gone, and that are older than --hours. Running
sandboxes, pinned ones (DOCKER_SANDBOX, DOCKER_SANDBOX_REUSE), sandboxes without an owner
record, unknown states and other sandboxes are never touched. A review-mode sandbox
(DOCKER_SANDBOX_WORKSPACE_MODE=review) has its work fetched to the host first, and is kept
while some of it is not landed (--force fetches afresh and removes it; the fetched work
stays on the host); once the work on the host shows unlanded changes, later sweeps keep
the sandbox without starting it. Once a cloud sandbox has been used (PI_SBX_CLOUD), the
cloud's sandboxes are swept too, by the same rules. Each verdict is printed with its
reason.`,
		env: append(append([]envDoc{}, sandboxEnv...), deployEnv...),
		flags: func(fs *flag.FlagSet) {
			fs.Float64Var(&o.hours, "hours", 24, "minimum age in `HOURS` (0: any age)")
			fs.BoolVar(&o.dryRun, "dry-run", false, "only say what would be removed")
			fs.BoolVar(&o.force, "force", false, "also remove review sandboxes with unlanded work (fetched first)")
		},
		run: func(ctx context.Context, std stdio, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			if o.hours < 0 {
				return usagef("--hours %v: want >= 0", o.hours)
			}
			sess, err := openSession(ctx, std, dirOptions{}, sessionRole{})
			if err != nil {
				return err
			}
			d, err := sess.Deployer(o.force)
			if err != nil {
				return err
			}
			entries, err := d.GC(ctx, time.Duration(o.hours*float64(time.Hour)), o.dryRun)
			if err != nil {
				return err
			}
			fmt.Fprint(std.out, lifecycle.FormatGC(entries))
			return nil
		},
	}
}
