package sbx

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// watchdogScript waits for the owner process to die and for every other holder of a
// lease on the sandbox (internal/host/lifecycle/lease.go) to be gone too, then tears the
// sandbox down with a few tries. It is a shell loop rather than a Go process so it costs
// nothing while it waits and survives its owner's `kill -9`. A lease counts while its
// pid runs (a reused pid only delays the teardown; the Go side also checks start times).
// It decides and tears down under the lease lock, as the Go side does, so a session
// joining meanwhile waits and then finds the sandbox gone: it opens the lock file as
// descriptor 9 and has the locker (this program, `LOCKER watchdog-lock 9`,
// lifecycle.WatchdogLock) take flock(2) on it, which stays taken while the shell keeps 9
// open. That works on every unix host (macOS has no flock(1)). A locker that cannot run
// (removed since) leaves it to decide without the lock rather than never. sbx does not
// get descriptor 9: a daemon it leaves behind would hold the lock for ever.
//
//	$1 owner pid, $2 poll seconds, $3 sbx program, $4 rm|stop, $5 sandbox,
//	$6 its lease directory and $7 its lease lock ("" none), $8 the locker ("" none),
//	$9 sbx's global flags (--cloud for a cloud sandbox, --no-input where the version has
//	   it, or "")
const watchdogScript = `pid=$1 poll=$2 sbx=$3 mode=$4 name=$5 leases=$6 lockf=$7 locker=$8 flags=$9
held() {
	kill -0 "$pid" 2>/dev/null && return 0
	[ -n "$leases" ] || return 1
	for f in "$leases"/*.lease; do
		[ -e "$f" ] || continue
		p=${f##*/}; p=${p%.lease}
		[ "$p" != "$pid" ] && kill -0 "$p" 2>/dev/null && return 0
	done
	return 1
}
# command: a failed redirection of a bare exec would end this shell, and the teardown.
lock() { [ -n "$lockf" ] && [ -n "$locker" ] && command exec 9>>"$lockf" && "$locker" ` + WatchdogLockCommand + ` 9; }
while :; do
	while held; do sleep "$poll"; done
	lock
	held || break
	exec 9>&-
done
for i in 1 2 3 4 5; do
	# $flags unquoted: empty, or the words --cloud and --no-input.
	if [ "$mode" = stop ]; then "$sbx" $flags stop "$name" 9>&-; else "$sbx" $flags rm --force "$name" 9>&-; fi && exit 0
	sleep 2
done
exit 1`

// WatchdogLockCommand is the internal subcommand of this program that the watchdog runs
// to take the lease lock on its descriptor (lifecycle.WatchdogLock).
const WatchdogLockCommand = "watchdog-lock"

// WatchdogShell is the program the watchdog runs (its script is watchdogScript).
const WatchdogShell = "/bin/sh"

// Watchdog is a detached process that tears the sandbox down when its owner dies.
type Watchdog struct {
	cancel context.CancelFunc
	done   chan struct{} // closed once the process has exited
}

// stopWait bounds how long Stop waits for the watchdog process to be gone.
const stopWait = 5 * time.Second

// StartWatchdog starts a detached watchdog for sandbox name that runs `sbx rm --force`
// (or `sbx stop` when stop) once process owner is gone, with the same scrubbed
// environment as every sbx call, and no other process holds a lease in leaseDir (its
// lock file leaseLock; both "" when no leases are kept). poll is how often it checks (2s
// when zero). locker is the program that takes the lease lock for it
// (WatchdogLockCommand: this executable, checked as a host file); "" leaves it to decide
// without the lock. The leases and the teardown's mode are the lifecycle's
// (internal/host/lifecycle); only the process that runs sbx is here.
func (c *Client) StartWatchdog(owner int, name string, stop bool, poll time.Duration, leaseDir, leaseLock, locker string) (*Watchdog, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	verb := "rm"
	if stop {
		verb = "stop"
	}
	if poll <= 0 {
		poll = 2 * time.Second
	}
	secs := strconv.FormatFloat(poll.Seconds(), 'f', -1, 64)
	args := []string{"-c", watchdogScript, "pi-sbx-watchdog", strconv.Itoa(owner), secs, c.Bin, verb, name}
	if leaseDir != "" {
		args = append(args, leaseDir, leaseLock, locker)
	} else {
		args = append(args, "", "", "")
	}
	// Only what is already known of the version: arming must not run sbx.
	var flags []string
	if c.Cloud {
		flags = append(flags, "--cloud")
	}
	if v, ok := c.knownVersions(); ok && SupportsGlobal(v.Client, "no-input") {
		flags = append(flags, "--no-input")
	}
	args = append(args, strings.Join(flags, " "))
	// Not bound to any caller's context: it must outlive this process. Stop ends it.
	ctx, cancel := context.WithCancel(context.Background())
	p, err := c.Runner.Start(ctx, WatchdogShell, Cmd{
		Args: args,
		Env:  c.Env,
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("starting the teardown watchdog: %w", err)
	}
	w := &Watchdog{cancel: cancel, done: make(chan struct{})}
	go func() {
		p.Wait() // reap it whenever it ends
		close(w.done)
	}()
	return w, nil
}

// Stop disarms the watchdog once the owner has torn down by itself. It returns when the
// watchdog process is gone: the kill that ending its context causes happens on another
// goroutine, and an owner that exits right after Stop would otherwise leave it armed, to
// find its owner dead and tear down again.
func (w *Watchdog) Stop() error {
	if w == nil {
		return errors.New("no watchdog")
	}
	w.cancel()
	t := time.NewTimer(stopWait)
	defer t.Stop()
	select {
	case <-w.done:
		return nil
	case <-t.C:
		return fmt.Errorf("the teardown watchdog did not stop within %s", stopWait)
	}
}
