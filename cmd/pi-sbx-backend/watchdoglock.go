package main

import (
	"context"
	"flag"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/lifecycle"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// watchdogLockCommand is the lock step of the teardown watchdog (internal/host/sbx/watchdog.go): the
// watchdog's /bin/sh runs this program for it because macOS has no flock(1).
func watchdogLockCommand() command {
	return command{
		name:     sbx.WatchdogLockCommand,
		synopsis: "FD",
		summary:  "take the lease lock on descriptor FD for the teardown watchdog",
		internal: true,
		help: `Run by the teardown watchdog (a /bin/sh loop on the host) to take the lease lock of
its sandbox: it waits for flock(2) on descriptor FD, which the watchdog opened on the lock
file and keeps. The lock belongs to that open file, so it stays taken after this exits,
until the watchdog has decided and torn down.`,
		flags: func(*flag.FlagSet) {}, // none, but -h/--help are answered
		run: func(_ context.Context, _ stdio, args []string) error {
			return lifecycle.RunWatchdogLock(args)
		},
	}
}
