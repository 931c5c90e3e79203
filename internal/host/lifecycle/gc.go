package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// GCOptions bound a sweep.
type GCOptions struct {
	MaxAge time.Duration // only sandboxes created longer ago than this
	DryRun bool          // say what would go, remove nothing
	Keep   []string      // never removed: this session's sandbox, pinned names
	Now    time.Time     // the sweep's clock (time.Now when zero)
	// Save, when set, runs before a sandbox is removed: it saves the sandbox's work on
	// the host (review mode) and fails when the sandbox must be kept (unlanded work, or
	// work it could not save). The sandbox is then kept (stopped again), unless Force.
	Save  func(ctx context.Context, name string) error
	Force bool
	// Cloud sweeps the cloud sandboxes too (sbx --cloud), by the same rules: set when
	// this user has used the cloud, so that an account without it is never asked.
	Cloud bool
}

// GC verdicts.
const (
	GCRemoved     = "removed"
	GCWouldRemove = "would remove"
	GCKept        = "kept"
	GCFailed      = "remove failed"
)

// GCEntry is the sweep's verdict on one sandbox, with the reason.
type GCEntry struct {
	Name, Status, Verdict, Reason string
}

// SessionPrefix starts the names of per-session sandboxes, the only ones GC considers.
const SessionPrefix = "pi-sbx-"

// GC removes, through c (and its cloud side when o.Cloud), the pi-sbx-* sandboxes that sbx lists as stopped, that are not kept, whose owner
// record exists, is not pinned and proves the owner gone, and that are older than
// MaxAge. Everything else — running, unknown states, foreign names, no record — is kept.
// It uses `sbx ls --json` and the project's owner records only.
func GC(ctx context.Context, c *sbx.Client, owners *Owners, o GCOptions) ([]GCEntry, error) {
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	sides := []*sbx.Client{c}
	if o.Cloud && !c.Cloud {
		sides = append(sides, c.InCloud())
	}
	var out []GCEntry
	var listed []sbx.Sandbox // every side's: an owner record is forgotten only when no side lists it
	for _, side := range sides {
		list, err := side.Ls(ctx)
		if err != nil {
			where := "sandboxes"
			if side.Cloud {
				where = "cloud sandboxes"
			}
			return nil, fmt.Errorf("gc: listing %s: %w", where, err)
		}
		listed = append(listed, list...)
		for _, s := range list {
			out = append(out, sweep(ctx, side, s, owners, o, now))
		}
	}
	if !o.DryRun && owners != nil {
		owners.prune(listed, now, o.MaxAge)
	}
	return out, nil
}

// sweep is the verdict on one sandbox of c's side, carried out.
func sweep(ctx context.Context, c *sbx.Client, s sbx.Sandbox, owners *Owners, o GCOptions, now time.Time) GCEntry {
	e := GCEntry{Name: s.Name, Status: s.Status, Verdict: GCKept}
	e.Reason = gcReason(c, s, owners, o, now)
	if e.Reason == "" && !o.DryRun && o.Save != nil {
		if err := o.Save(ctx, s.Name); err != nil && !o.Force {
			e.Reason = "its work is kept: " + err.Error()
			_ = c.Stop(ctx, s.Name) // saving started it
		}
	}
	if e.Reason != "" {
		return e
	}
	if o.DryRun {
		e.Verdict, e.Reason = GCWouldRemove, "stopped, owner gone, old enough"
	} else if err := c.Rm(ctx, s.Name); err != nil && !errors.Is(err, sbx.ErrMissing) {
		e.Verdict, e.Reason = GCFailed, err.Error()
	} else {
		e.Verdict, e.Reason = GCRemoved, "stopped, owner gone, old enough"
		if err := owners.Remove(s.Name); err != nil {
			e.Reason += fmt.Sprintf(" (owner record not removed: %v)", err)
		}
	}
	return e
}

// prune forgets the records of sandboxes sbx no longer lists whose owner is gone and
// that are older than maxAge (the sandbox went with its session's teardown, or by hand),
// and their old lease locks. Forgetting only ever makes GC keep more.
func (o *Owners) prune(list []sbx.Sandbox, now time.Time, maxAge time.Duration) {
	listed := map[string]bool{}
	for _, s := range list {
		listed[s.Name] = true
	}
	o.Leases().prune(listed, now, maxAge)
	ents, err := os.ReadDir(o.Dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || listed[name] || sbx.ValidateName(name) != nil {
			continue
		}
		rec, err := o.Read(name)
		if err != nil {
			continue
		}
		if gone, _ := rec.Gone(); gone && now.Sub(rec.Created) > maxAge {
			o.Remove(name)
		}
	}
}

// gcReason returns why s is kept, or "" when it may be collected.
func gcReason(c *sbx.Client, s sbx.Sandbox, owners *Owners, o GCOptions, now time.Time) string {
	if !strings.HasPrefix(s.Name, SessionPrefix) {
		return "not a pi-sbx sandbox"
	}
	for _, k := range o.Keep {
		if k == s.Name {
			return "this session's or a pinned sandbox"
		}
	}
	switch s.Status {
	case "stopped":
	case "running":
		return "running"
	default:
		return fmt.Sprintf("unknown state %q", s.Status)
	}
	if owners == nil {
		return "no owner records"
	}
	rec, err := owners.Read(s.Name)
	if errors.Is(err, os.ErrNotExist) {
		return "no owner record (not provably ours)"
	}
	if err != nil {
		return err.Error()
	}
	if rec.Pinned {
		return "pinned by DOCKER_SANDBOX"
	}
	if held, _ := owners.Leases().Others(s.Name, 0); len(held) > 0 {
		return "in use by " + Describe(held)
	}
	if gone, why := rec.Gone(); !gone {
		return why
	}
	if age := now.Sub(rec.Created); age <= o.MaxAge {
		return fmt.Sprintf("only %s old", age.Round(time.Second))
	}
	return ""
}

// FormatGC renders a sweep's verdicts for people and models.
func FormatGC(entries []GCEntry) string {
	if len(entries) == 0 {
		return "GC: no sandboxes.\n"
	}
	var b strings.Builder
	n := 0
	for _, e := range entries {
		if e.Verdict == GCRemoved || e.Verdict == GCWouldRemove {
			n++
		}
		fmt.Fprintf(&b, "%-13s %s (%s): %s\n", e.Verdict, e.Name, e.Status, e.Reason)
	}
	return fmt.Sprintf("GC: %d of %d sandboxes collected.\n", n, len(entries)) + b.String()
}
