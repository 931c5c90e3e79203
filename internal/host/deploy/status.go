package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/lifecycle"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// WarnPercent is the use above which status and resources warn.
const WarnPercent = 85

// vmStats is the probe status and resources share: memory, CPUs, disk of /.
const vmStats = `free -m | awk '/^Mem:/ {print "mem", $2, $3}'; echo "cpus $(nproc)"; df -Pk / | awk 'NR==2 {print "disk", $2, $3}'`

type stats struct {
	memTotal, memUsed   int64 // MiB
	cpus                int
	diskTotal, diskUsed int64 // KiB
}

func parseStats(s string) stats {
	var st stats
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		num := func(i int) int64 {
			if i < len(f) {
				n, _ := strconv.ParseInt(f[i], 10, 64)
				return n
			}
			return 0
		}
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "mem":
			st.memTotal, st.memUsed = num(1), num(2)
		case "cpus":
			st.cpus = int(num(1))
		case "disk":
			st.diskTotal, st.diskUsed = num(1), num(2)
		}
	}
	return st
}

func percent(used, total int64) int {
	if total <= 0 {
		return 0
	}
	return int(used * 100 / total)
}

func (st stats) lines() (string, []string) {
	var warns []string
	mp, dp := percent(st.memUsed, st.memTotal), percent(st.diskUsed, st.diskTotal)
	if mp > WarnPercent {
		warns = append(warns, fmt.Sprintf("memory is %d%% used", mp))
	}
	if dp > WarnPercent {
		warns = append(warns, fmt.Sprintf("disk is %d%% used (docker_prune frees images and build cache)", dp))
	}
	return fmt.Sprintf("CPUs: %d\nMemory: %d MiB of %d MiB used (%d%%)\nDisk /: %.1f GiB of %.1f GiB used (%d%%)",
		st.cpus, st.memUsed, st.memTotal, mp, float64(st.diskUsed)/(1<<20), float64(st.diskTotal)/(1<<20), dp), warns
}

func (d *Deployer) status(ctx context.Context, _ json.RawMessage) (string, error) {
	var b strings.Builder
	state := "not created yet (it is created on first use)"
	d.mu.Lock()
	removed := d.removed
	d.mu.Unlock()
	if removed {
		state = "removed by docker_sandbox_rm; every tool call of this session fails; start a new session for a new sandbox"
	}
	if sb, err := d.Sbx.Lookup(ctx, d.Name); err == nil {
		state = sb.Status
	} else if !errors.Is(err, sbx.ErrMissing) {
		return "", err
	}
	fmt.Fprintf(&b, "Sandbox: %s (%s)\n", d.Name, state)
	if state != "running" && state != "stopped" {
		d.modes(&b)
		return b.String(), nil
	}
	ver, err := d.docker(ctx, ShortTimeout, "version", "--format", "{{.Server.Version}}")
	if err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "Docker engine: %s\n", strings.TrimSpace(ver.text()))
	if o, err := d.inSandbox(ctx, ShortTimeout, nil, "sh", "-c", vmStats); err == nil {
		text, warns := parseStats(o.stdout).lines()
		b.WriteString(text + "\n")
		for _, w := range warns {
			fmt.Fprintf(&b, "WARNING: %s\n", w)
		}
	}
	if o, err := d.docker(ctx, ShortTimeout, "info", "--format", "{{.Containers}} {{.ContainersRunning}} {{.Images}}"); err == nil && o.code == 0 {
		f := strings.Fields(o.stdout)
		if len(f) == 3 {
			fmt.Fprintf(&b, "Containers: %s (%s running), images: %s\n", f[0], f[1], f[2])
		}
	}
	if list, err := d.Sbx.ListPorts(ctx, d.Name); err == nil {
		for _, m := range list {
			fmt.Fprintf(&b, "Published: %s -> sandbox port %d\n", url(m), m.SandboxPort)
		}
	}
	d.modes(&b)
	return b.String(), nil
}

func (d *Deployer) modes(b *strings.Builder) {
	mount := "read-write"
	if d.ReadOnly {
		mount = "read-only (DOCKER_SANDBOX_WORKSPACE_RO; binds get :ro)"
	}
	fmt.Fprintf(b, "Workspace: %s, %s\n", d.Workspace, mount)
	fmt.Fprintf(b, "Env forwarding: %s\n", envMode(d.Settings.Policy))
	pinned := "session sandbox"
	if d.Pinned {
		pinned = "pinned by DOCKER_SANDBOX"
	}
	fmt.Fprintf(b, "Teardown: %s (%s)\n", d.Teardown, pinned)
}

func (d *Deployer) resources(ctx context.Context, _ json.RawMessage) (string, error) {
	o, err := d.inSandbox(ctx, ShortTimeout, nil, "sh", "-c", vmStats)
	if err != nil {
		return "", err
	}
	if err := o.err("resource probe"); err != nil {
		return "", err
	}
	var b strings.Builder
	text, warns := parseStats(o.stdout).lines()
	b.WriteString(text + "\n")
	for _, w := range warns {
		fmt.Fprintf(&b, "WARNING: %s\n", w)
	}
	if df, err := d.docker(ctx, ShortTimeout, "system", "df"); err == nil {
		b.WriteString("\nDocker disk use:\n" + df.text() + "\n")
	}
	if st, err := d.docker(ctx, ShortTimeout, "stats", "--no-stream", "--format", "table {{.Name}}\t{{.CPUPerc}}\t{{.MemUsage}}\t{{.MemPerc}}"); err == nil {
		b.WriteString("\nContainers:\n" + st.text() + "\n")
	}
	return b.String(), nil
}

func (d *Deployer) sandboxRm(ctx context.Context, _ json.RawMessage) (string, error) {
	// Shared (an editor's serve, a shell on the same warm or pinned sandbox): removing
	// it would pull it from under them.
	if held, _ := d.Owners.Leases().Others(d.Name, os.Getpid()); len(held) > 0 {
		return "", fmt.Errorf("sandbox %s is in use by %s too: not removed (end those sessions first, or remove it by hand with sbx rm %s)", d.Name, lifecycle.Describe(held), d.Name)
	}
	err := d.Sbx.Rm(ctx, d.Name)
	if err != nil && !errors.Is(err, sbx.ErrMissing) {
		return "", fmt.Errorf("removing sandbox %s: %w", d.Name, err)
	}
	if d.Owners != nil {
		d.Owners.Remove(d.Name) // best effort: a stale record only keeps GC away
	}
	d.mu.Lock()
	d.published = map[string][]sbx.Published{}
	d.removed = true
	d.mu.Unlock()
	if d.Removed != nil {
		d.Removed()
	}
	if errors.Is(err, sbx.ErrMissing) {
		return fmt.Sprintf("Sandbox %s did not exist.", d.Name), nil
	}
	return fmt.Sprintf("Removed sandbox %s and everything in it. Tool calls of this session now fail; start a new session for a new sandbox.", d.Name), nil
}

func (d *Deployer) gcTool(ctx context.Context, raw json.RawMessage) (string, error) {
	a, err := decode[struct {
		Hours  *float64 `json:"hours"`
		DryRun bool     `json:"dryRun"`
	}](raw)
	if err != nil {
		return "", err
	}
	hours := 24.0
	if a.Hours != nil {
		hours = *a.Hours
	}
	if hours < 0 || hours > 24*365 {
		return "", refuse("hours %v: want 0-8760", hours)
	}
	entries, err := d.GC(ctx, time.Duration(hours*float64(time.Hour)), a.DryRun)
	if err != nil {
		return "", err
	}
	return lifecycle.FormatGC(entries), nil
}

// GC sweeps stale sandboxes, never this session's.
func (d *Deployer) GC(ctx context.Context, maxAge time.Duration, dryRun bool) ([]lifecycle.GCEntry, error) {
	save := d.SaveWork
	if !d.ForceGC && d.KeepWork != nil {
		save = d.KeepWork // forced, the work is fetched afresh before the sandbox goes
	}
	cloud := d.UsedCloud != nil && d.UsedCloud()
	return lifecycle.GC(ctx, d.Sbx, d.Owners, lifecycle.GCOptions{MaxAge: maxAge, DryRun: dryRun, Keep: []string{d.Name}, Save: save, Force: d.ForceGC, Cloud: cloud})
}
