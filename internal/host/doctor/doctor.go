// Package doctor checks that this host can run sandboxes with sbx, and says how to fix
// what stops it: sbx found (where), its version (new enough; client and daemon the
// same), its daemon running, signed in to Docker, virtualization available, disk space,
// SSH agent forwarding (a warning), and with Smoke a real create → exec → rm round trip.
// Each check is PASS, WARN or FAIL with its evidence and, for a FAIL, the one command
// that fixes it.
//
// It reaches sbx only through package sbx, and reads the platform through Host, so that
// every check can be shown to fail in tests.
package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// Status is a check's verdict.
type Status string

// The verdicts.
const (
	Pass Status = "PASS"
	Warn Status = "WARN"
	Fail Status = "FAIL"
)

// Check is one verdict with its evidence.
type Check struct {
	Name     string `json:"name"`
	Status   Status `json:"status"`
	Evidence string `json:"evidence"`
	// Fix is the one command that fixes a FAIL (or a WARN), "" when there is none.
	Fix string `json:"fix,omitempty"`
}

// Report is every check, in order.
type Report struct {
	Checks []Check `json:"checks"`
}

// OK reports whether nothing failed (warnings allowed).
func (r Report) OK() bool {
	for _, c := range r.Checks {
		if c.Status == Fail {
			return false
		}
	}
	return true
}

// Failures are the failed checks.
func (r Report) Failures() []Check {
	var out []Check
	for _, c := range r.Checks {
		if c.Status == Fail {
			out = append(out, c)
		}
	}
	return out
}

// Text renders the report for a terminal: one line per check, the fix under a FAIL.
func (r Report) Text() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	for _, c := range r.Checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Status, c.Name, c.Evidence)
		if c.Fix != "" && c.Status != Pass {
			fmt.Fprintf(tw, "\t\tfix: %s\n", c.Fix)
		}
	}
	tw.Flush()
	if r.OK() {
		b.WriteString("Nothing failed.\n")
	} else {
		fmt.Fprintf(&b, "%d check(s) failed.\n", len(r.Failures()))
	}
	return b.String()
}

// JSON renders the report as {"ok":bool,"checks":[…]}.
func (r Report) JSON() ([]byte, error) {
	return json.MarshalIndent(struct {
		OK     bool    `json:"ok"`
		Checks []Check `json:"checks"`
	}{r.OK(), r.Checks}, "", "  ")
}

// Summary is one line for a status bar: the first failure and its fix, e.g.
// "sbx is signed out — run sbx login"; "" when nothing failed.
func (r Report) Summary() string {
	f := r.Failures()
	if len(f) == 0 {
		return ""
	}
	s := f[0].Evidence
	if f[0].Fix != "" {
		s += " — run " + f[0].Fix
	}
	return s
}

// Host is what the platform checks read, injected so tests can play any host.
type Host struct {
	GOOS, GOARCH string
	// MacOSVersion returns macOS's product version ("14.5"); darwin only.
	MacOSVersion func(ctx context.Context) (string, error)
	// KVM checks that /dev/kvm is readable and writable by this user; linux only.
	KVM func() error
	// Hypervisor reports whether the Windows Hypervisor Platform is enabled; windows only.
	Hypervisor func(ctx context.Context) (bool, error)
	// Env reads the user's environment (settings sbx reads from it, such as
	// VirtiofsCacheVar); nil reads nothing.
	Env func(key string) (string, bool)
}

// Doctor runs the checks.
type Doctor struct {
	Sbx  *sbx.Client
	Host Host
	// Smoke adds a real create → exec → rm round trip in a throwaway sandbox, with
	// Workspace (a directory of its own, outside any project) mounted.
	Smoke     bool
	Workspace string
	// Timeout bounds each sbx call (30 s when zero; sbx has no timeout of its own).
	Timeout time.Duration
}

// Run runs every check.
func (d *Doctor) Run(ctx context.Context) Report {
	r := d.Quick(ctx)
	if !found(r) {
		return r
	}
	dctx, cancel := d.bound(ctx)
	diag, diagErr := d.Sbx.Diagnose(dctx)
	cancel()
	r.Checks = append(r.Checks, d.virtualization(ctx, diag), disk(diag, diagErr), d.sshForwarding(ctx), d.proxy(ctx), d.share())
	if d.Smoke {
		r.Checks = append(r.Checks, d.smoke(ctx))
	}
	return r
}

// Quick runs the cheap checks serve runs at start: sbx found, its daemon, version and
// sign-in (a few sbx calls, no VM).
func (d *Doctor) Quick(ctx context.Context) Report {
	var r Report
	r.Checks = append(r.Checks, d.found())
	if !found(r) {
		return r
	}
	// The daemon first: the other calls start it if it is not running.
	r.Checks = append(r.Checks, d.daemon(ctx), d.version(ctx), d.signedIn(ctx), d.network(ctx))
	return r
}

// StartPreflight runs the quick checks with client c in the background as serve starts
// (they outlive ctx's cancellation, not its values) and returns what pi_sbx_status asks:
// nil, or the first failure as a status line says it ("sandbox: sbx is signed out — run
// sbx login"), waiting for the checks at most as long as its own ctx.
func StartPreflight(ctx context.Context, c *sbx.Client) func(context.Context) error {
	done := make(chan struct{})
	var report Report
	go func() {
		report = (&Doctor{Sbx: c, Host: ThisHost()}).Quick(context.WithoutCancel(ctx))
		close(done)
	}()
	return func(ctx context.Context) error {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if report.OK() {
			return nil
		}
		return errors.New("sandbox: " + report.Summary())
	}
}

func found(r Report) bool { return len(r.Checks) > 0 && r.Checks[0].Status != Fail }

// bound gives one sbx call its timeout.
func (d *Doctor) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	t := d.Timeout
	if t == 0 {
		t = 30 * time.Second
	}
	return context.WithTimeout(ctx, t)
}

func (d *Doctor) found() Check {
	const n = "sbx found"
	if d.Sbx.Missing != nil {
		return Check{n, Fail, d.Sbx.Missing.Error(), sbx.InstallHint()}
	}
	if strings.ContainsAny(d.Sbx.Bin, `/\`) {
		// PI_SBX_BIN names a path: it is used as given, so say here if it is wrong.
		if fi, err := os.Stat(d.Sbx.Bin); err != nil || fi.IsDir() {
			return Check{n, Fail, fmt.Sprintf("PI_SBX_BIN=%s is not a program (%v)", d.Sbx.Bin, err), "unset PI_SBX_BIN"}
		}
	}
	return Check{Name: n, Status: Pass, Evidence: d.Sbx.Bin}
}

func (d *Doctor) daemon(ctx context.Context) Check {
	ctx, cancel := d.bound(ctx)
	defer cancel()
	const n = "daemon running"
	running, detail, err := d.Sbx.DaemonStatus(ctx)
	switch {
	case err != nil:
		return Check{n, Warn, "sbx daemon status: " + err.Error(), ""}
	case !running:
		return Check{n, Fail, "the sbx daemon is not running" + paren(detail), "sbx daemon start"}
	}
	return Check{Name: n, Status: Pass, Evidence: "sandboxd is running" + paren(detail)}
}

func (d *Doctor) version(ctx context.Context) Check {
	ctx, cancel := d.bound(ctx)
	defer cancel()
	const n = "version"
	v, err := d.Sbx.Versions(ctx)
	if err != nil {
		return Check{n, Fail, "sbx version: " + err.Error(), sbx.UpgradeHint()}
	}
	if err := sbx.CheckMinVersion(v.Client); err != nil {
		return Check{n, Fail, fmt.Sprintf("sbx v%s is older than v%s, the oldest whose flags pi-sbx-backend uses", v.Client, sbx.MinVersion), sbx.UpgradeHint()}
	}
	if v.Server != "" && v.Server != v.Client {
		return Check{n, Fail, fmt.Sprintf("client v%s but daemon v%s", v.Client, v.Server), "sbx daemon restart"}
	}
	ev := "client v" + v.Client
	if v.Server != "" {
		ev += ", daemon v" + v.Server
	}
	return Check{Name: n, Status: Pass, Evidence: ev + " (needs ≥ v" + sbx.MinVersion + ")"}
}

func (d *Doctor) signedIn(ctx context.Context) Check {
	ctx, cancel := d.bound(ctx)
	defer cancel()
	const n = "signed in"
	list, err := d.Sbx.Ls(ctx)
	switch {
	case errors.Is(err, sbx.ErrSignedOut):
		return Check{n, Fail, "sbx is signed out", "sbx login"}
	case err != nil:
		return Check{n, Fail, "sbx ls: " + err.Error(), "sbx diagnose"}
	}
	return Check{Name: n, Status: Pass, Evidence: fmt.Sprintf("sbx ls answered (%d sandboxes)", len(list))}
}

// virtualization takes sbx diagnose's verdict where it has one, else probes the
// platform: macOS 14+ on Apple silicon, /dev/kvm on Linux, the Hypervisor Platform on
// Windows.
func (d *Doctor) virtualization(ctx context.Context, diag []sbx.DiagCheck) Check {
	const n = "virtualization"
	if c, ok := diagCheck(diag, "Virtualization"); ok {
		return fromDiag(n, c, "sbx diagnose")
	}
	h := d.Host
	switch h.GOOS {
	case "darwin":
		if h.GOARCH != "arm64" {
			return Check{n, Fail, "sbx needs a Mac with Apple silicon; this one is " + h.GOARCH, ""}
		}
		v, err := h.MacOSVersion(ctx)
		if err != nil {
			return Check{n, Warn, "cannot read the macOS version: " + err.Error(), ""}
		}
		if sbx.CompareVersions(v, "14.0") < 0 {
			return Check{n, Fail, "macOS " + v + " on Apple silicon; sbx needs macOS 14 or newer", "softwareupdate --list"}
		}
		return Check{Name: n, Status: Pass, Evidence: "macOS " + v + " on Apple silicon"}
	case "linux":
		if err := h.KVM(); err != nil {
			return Check{n, Fail, "/dev/kvm: " + err.Error(), "sudo usermod -aG kvm $USER  (then log in again)"}
		}
		return Check{Name: n, Status: Pass, Evidence: "/dev/kvm is readable and writable"}
	case "windows":
		on, err := h.Hypervisor(ctx)
		switch {
		case err != nil:
			return Check{n, Warn, "cannot tell whether the Windows Hypervisor Platform is on: " + err.Error(), ""}
		case !on:
			return Check{n, Fail, "the Windows Hypervisor Platform is off",
				"Enable-WindowsOptionalFeature -Online -FeatureName HypervisorPlatform  (as administrator, then reboot)"}
		}
		return Check{Name: n, Status: Pass, Evidence: "the Windows Hypervisor Platform is on"}
	}
	return Check{n, Fail, "sbx does not run on " + h.GOOS, ""}
}

func disk(diag []sbx.DiagCheck, err error) Check {
	const n = "disk"
	if c, ok := diagCheck(diag, "Disk space"); ok {
		return fromDiag(n, c, "sbx diagnose")
	}
	if err != nil {
		return Check{n, Warn, "sbx diagnose: " + err.Error(), ""}
	}
	return Check{n, Warn, "sbx diagnose reports no disk check", ""}
}

func (d *Doctor) sshForwarding(ctx context.Context) Check {
	ctx, cancel := d.bound(ctx)
	defer cancel()
	const n = "ssh agent forwarding"
	v, err := d.Sbx.Setting(ctx, "ssh.agentForwardingEnabled")
	switch {
	case err != nil:
		return Check{n, Warn, "cannot read ssh.agentForwardingEnabled (" + err.Error() + "); sbx forwards the SSH agent by default", "sbx settings set ssh.agentForwardingEnabled false"}
	case v == "true":
		return Check{n, Warn, "on: any process in a sandbox can ask your SSH agent to sign", "sbx settings set ssh.agentForwardingEnabled false"}
	}
	return Check{Name: n, Status: Pass, Evidence: "ssh.agentForwardingEnabled=" + v}
}

// smoke creates a throwaway sandbox, runs a command in it, and removes it.
func (d *Doctor) smoke(ctx context.Context) Check {
	const n = "smoke"
	name := fmt.Sprintf("pi-sbx-doctor-%d", os.Getpid())
	start := time.Now()
	if err := d.Sbx.Create(ctx, name, sbx.CreateOpts{Workspaces: []string{d.Workspace}, Quiet: true}); err != nil {
		_ = d.Sbx.Rm(context.WithoutCancel(ctx), name)
		return Check{n, Fail, "sbx create: " + err.Error(), "sbx diagnose"}
	}
	created := time.Since(start)
	defer d.Sbx.Rm(context.WithoutCancel(ctx), name)
	res, err := d.Sbx.Exec(ctx, name, []string{"sh", "-c", "echo ok; id -un"}, sbx.ExecOpts{})
	if err != nil || res.ExitCode != 0 || !strings.HasPrefix(string(res.Stdout), "ok\n") {
		return Check{n, Fail, fmt.Sprintf("sbx exec: %v (exit %d, %q)", err, res.ExitCode, res.Stdout), "sbx diagnose"}
	}
	ran := time.Since(start) - created
	if err := d.Sbx.Rm(ctx, name); err != nil {
		return Check{n, Fail, "sbx rm: " + err.Error(), "sbx rm --force " + name}
	}
	user := strings.TrimSpace(strings.TrimPrefix(string(res.Stdout), "ok\n"))
	return Check{Name: n, Status: Pass, Evidence: fmt.Sprintf("create %.1fs, exec %.2fs (as %s), rm %.1fs",
		created.Seconds(), ran.Seconds(), user, (time.Since(start) - created - ran).Seconds())}
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

func diagCheck(diag []sbx.DiagCheck, name string) (sbx.DiagCheck, bool) {
	for _, c := range diag {
		if strings.EqualFold(c.Name, name) {
			return c, true
		}
	}
	return sbx.DiagCheck{}, false
}

func fromDiag(name string, c sbx.DiagCheck, from string) Check {
	ev := c.Message
	if c.Detail != "" {
		ev += " (" + c.Detail + ")"
	}
	ev += " [" + from + "]"
	switch strings.ToLower(c.Status) {
	case "pass", "ok", "passed":
		return Check{Name: name, Status: Pass, Evidence: ev}
	case "warn", "warning":
		return Check{name, Warn, ev, c.Hint}
	}
	return Check{name, Fail, ev, c.Hint}
}
