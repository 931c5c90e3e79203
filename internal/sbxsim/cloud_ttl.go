//go:build linux

package sbxsim

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// A cloud sandbox's TTL is watched by a detached sbxsim (`__cloudttl STORE NAME`) that
// applies --on-timeout when it ends. It is recorded as the sandbox's stopper: a cloud
// sandbox has no auto-stop, so the slot is free, and rm already kills the recorded
// stopper, so no watcher outlives its sandbox.

// cloudTTLPoll is how often a watcher reads the TTL again (`ttl` may have moved it).
const cloudTTLPoll = 200 * time.Millisecond

// armCloudTTL starts the sandbox's TTL watcher unless one is alive.
func (m *Manager) armCloudTTL(ctx context.Context, name string) error {
	l, err := m.Store.Lock(ctx, name)
	if err != nil {
		return nil // removed meanwhile
	}
	defer l.Unlock()
	if p := m.Store.stopper(name); p != nil && p.Alive() {
		return nil
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("arming the TTL of %s: %w", name, err)
	}
	defer null.Close()
	cmd := exec.Command(m.Self, "__cloudttl", m.Store.Root, name)
	cmd.Env = []string{"PATH=" + defaultPath}
	cmd.Dir = "/"
	// Its own session, /dev/null for input and output and a log of its own for errors:
	// a caller waiting for sbx's output must not wait for the watcher.
	logf, err := os.OpenFile(filepath.Join(m.Store.dir(name), "ttl.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("arming the TTL of %s: %w", name, err)
	}
	defer logf.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("arming the TTL of %s: %w", name, err)
	}
	defer cmd.Process.Release()
	p, err := procOf(cmd.Process.Pid)
	if err != nil {
		return nil // already gone
	}
	b, _ := json.Marshal(p)
	if err := os.WriteFile(m.Store.stopperFile(name), b, 0o600); err != nil {
		_ = cmd.Process.Kill()
		return fmt.Errorf("arming the TTL of %s: %w", name, err)
	}
	return nil
}

// RunCloudTTL is the hidden `__cloudttl STORE NAME` mode: it waits for the sandbox's TTL
// to end and applies its on-timeout action; it exits when the sandbox is gone, another
// watcher is recorded, or the action left nothing to watch.
func RunCloudTTL(args []string, self string) int {
	if len(args) != 2 {
		return 2
	}
	m := &Manager{Store: Store{Root: args[0]}, Self: self, Stderr: os.Stderr}
	name := args[1]
	if !m.Store.waitRecorded(name) {
		return 0
	}
	for {
		if p := m.Store.stopper(name); p == nil || p.Pid != os.Getpid() {
			return 0
		}
		sb, err := m.Store.Load(name)
		if err != nil || sb.Cloud == nil {
			return 0
		}
		if wait := time.Until(sb.Cloud.expiry(sb.Created)); wait > 0 {
			time.Sleep(min(wait, cloudTTLPoll))
			continue
		}
		again, err := m.applyTimeout(name, true)
		if err != nil {
			fmt.Fprintf(os.Stderr, "sbxsim: timeout of %s: %v\n", name, err)
			return 1
		}
		if !again {
			return 0
		}
	}
}

// applyTimeout applies the on-timeout action of a sandbox whose TTL ended; watcher says
// the caller is the recorded watcher (which then gives up its record unless the
// sandbox restarted). It reports whether there is a new TTL to watch.
func (m *Manager) applyTimeout(name string, watcher bool) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := m.Store.Lock(ctx, name)
	if err != nil {
		return false, nil // removed
	}
	sb, err := m.Store.Load(name)
	now := time.Now()
	if err != nil || sb.Cloud == nil || !sb.Cloud.expired(sb.Created, now) || sb.Cloud.TimedOut {
		l.Unlock()
		return err == nil && sb.Cloud != nil && !sb.Cloud.TimedOut, nil
	}
	cl := sb.Cloud
	switch cl.OnTimeout {
	case "delete":
		if watcher {
			_ = os.Remove(m.Store.stopperFile(name)) // rm would kill this very process
		}
		l.Unlock()
		return false, m.remove(ctx, name)
	case "restart":
		defer l.Unlock()
		if err := m.stop(ctx, sb); err != nil {
			return false, err
		}
		life := cl.elapsed(sb.Created, now) + cl.TTL
		if life > cloudMaxLifetime { // at the end of its lifetime, it stays stopped
			cl.TimedOut = true
			if watcher {
				_ = os.Remove(m.Store.stopperFile(name))
			}
			return false, m.Store.Save(sb)
		}
		cl.Lifetime = life
		if err := m.start(ctx, sb); err != nil {
			return false, err
		}
		return true, m.Store.Save(sb)
	default: // stop: the files stay, for a later start or cp
		defer l.Unlock()
		cl.TimedOut = true
		if sb.Running() {
			if err := m.stop(ctx, sb); err != nil { // stop saves sb
				return false, err
			}
		} else if err := m.Store.Save(sb); err != nil {
			return false, err
		}
		if watcher {
			_ = os.Remove(m.Store.stopperFile(name))
		}
		return false, nil
	}
}

// sweepTimeouts applies the on-timeout of every cloud sandbox whose TTL ended and whose
// watcher is not alive to do it.
func (c *cli) sweepTimeouts(ctx context.Context) {
	all, err := c.m.Store.List()
	if err != nil {
		return
	}
	now := time.Now()
	for _, sb := range all {
		if sb.Cloud == nil || sb.Cloud.TimedOut || !sb.Cloud.expired(sb.Created, now) {
			continue
		}
		if p := c.m.Store.stopper(sb.Name); p != nil && p.Alive() {
			continue
		}
		if again, err := c.m.applyTimeout(sb.Name, false); err != nil {
			fmt.Fprintf(c.env.Stderr, "WARN: timeout of %s: %v\n", sb.Name, err)
		} else if again {
			if err := c.m.armCloudTTL(ctx, sb.Name); err != nil {
				fmt.Fprintf(c.env.Stderr, "WARN: %v\n", err)
			}
		}
	}
}
