//go:build linux

package sbxsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The simulated sandboxd daemon and Docker sign-in are two marker files in the state
// directory: a fresh state has the daemon running and the user signed in.
func (st Store) daemonDownFile() string { return filepath.Join(st.Root, "daemon-stopped") }
func (st Store) daemonPIDFile() string  { return filepath.Join(st.Root, "daemon.pid") }
func (st Store) signedOutFile() string  { return filepath.Join(st.Root, "signed-out") }
func (st Store) daemonLog() string      { return filepath.Join(st.Root, "daemon.log") }

// daemonRunning reports whether the simulated daemon is up.
func (st Store) daemonRunning() bool {
	_, err := os.Stat(st.daemonDownFile())
	return err != nil
}

// signedIn reports whether the simulated user is signed in to Docker.
func (st Store) signedIn() bool {
	_, err := os.Stat(st.signedOutFile())
	return err != nil
}

// daemonPID is the pid the banner announced (the sbxsim process that "started" it).
func (st Store) daemonPID() int {
	b, _ := os.ReadFile(st.daemonPIDFile())
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// daemonLogf appends a line to the simulated daemon's log (`daemon logs`); a failure
// to log is not the command's.
func (st Store) daemonLogf(format string, args ...any) {
	f, err := os.OpenFile(st.daemonLog(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, args...))
}

// daemonLogs is `daemon logs [--follow] [-n N]`: the last N lines (all by default),
// then, with --follow, what is appended until the command is killed.
func (c *cli) daemonLogs(ctx context.Context, fs flagSet) error {
	n := -1
	if fs.has("lines") {
		v, err := strconv.Atoi(fs.last("lines"))
		if err != nil || v < 0 {
			return fmt.Errorf("invalid -n %q: want a number of lines", fs.last("lines"))
		}
		n = v
	}
	b, err := os.ReadFile(c.m.Store.daemonLog())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("reading the daemon's log: %w", err)
	}
	ls := strings.SplitAfter(string(b), "\n")
	if len(ls) > 0 && ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	if n >= 0 && len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	io.WriteString(c.env.Stdout, strings.Join(ls, ""))
	if !fs.has("follow") {
		return nil
	}
	off := int64(len(b))
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(200 * time.Millisecond):
		}
		f, err := os.Open(c.m.Store.daemonLog())
		if err != nil {
			continue
		}
		if _, err := f.Seek(off, io.SeekStart); err == nil {
			m, _ := io.Copy(c.env.Stdout, f)
			off += m
		}
		f.Close()
	}
}

// startDaemon brings the simulated daemon up if it is down, printing real sbx's banner
// on w (stdout: SBX#201 — before any JSON). Exactly one of several racing commands
// prints it: the one whose remove of the marker succeeds.
func (st Store) startDaemon(w io.Writer) error {
	if err := os.Remove(st.daemonDownFile()); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("starting sandboxd: %w", err)
	}
	pid := os.Getpid()
	_ = os.WriteFile(st.daemonPIDFile(), []byte(strconv.Itoa(pid)+"\n"), 0o600)
	st.daemonLogf("sandboxd started (PID %d)", pid)
	fmt.Fprintf(w, "Starting sandboxd daemon...\nDaemon started (PID %d)\nLogs: %s\n", pid, st.daemonLog())
	return nil
}

// stopAll stops every running sandbox (a daemon going down or a logout takes them).
func (c *cli) stopAll(ctx context.Context) error {
	all, err := c.m.Store.List()
	if err != nil {
		return err
	}
	var errs []error
	for _, sb := range all {
		if sb.Running() {
			errs = append(errs, c.stopOne(ctx, sb.Name))
		}
	}
	for _, sb := range all {
		c.m.Store.waitSessionsEnded(sb.Name, 5*time.Second)
	}
	return errors.Join(errs...)
}

func (c *cli) ensureStateRoot() error {
	return os.MkdirAll(c.m.Store.Root, 0o700)
}

// daemon is `daemon start|stop|restart|status [--json]`.
func (c *cli) daemon(ctx context.Context, args []string) error {
	fs, err := parseFlags(c.flagsOf("daemon"), args, true)
	if err != nil {
		return err
	}
	if len(fs.args) == 1 && fs.args[0] == "logs" && c.atLeast(V055) {
		return c.daemonLogs(ctx, fs)
	}
	if fs.has("follow") || fs.has("lines") {
		return errors.New("--follow and -n belong to \"sbx daemon logs\"")
	}
	if len(fs.args) != 1 {
		return errors.New(`"sbx daemon" requires a subcommand: start, stop, restart or status`)
	}
	if err := c.ensureStateRoot(); err != nil {
		return err
	}
	st := c.m.Store
	switch fs.args[0] {
	case "start":
		return st.startDaemon(c.env.Stdout)
	case "stop", "restart":
		if st.daemonRunning() {
			// The daemon owns the VMs: they stop with it (as after a reboot).
			if err := c.stopAll(ctx); err != nil {
				return err
			}
			if err := os.WriteFile(st.daemonDownFile(), nil, 0o600); err != nil {
				return err
			}
			fmt.Fprintln(c.env.Stdout, "Daemon stopped")
			st.daemonLogf("sandboxd stopped")
		}
		if fs.args[0] == "restart" {
			return st.startDaemon(c.env.Stdout)
		}
		return nil
	case "status":
		running := st.daemonRunning()
		if fs.has("json") {
			out := struct {
				Running bool   `json:"running"`
				PID     int    `json:"pid,omitempty"`
				Version string `json:"version,omitempty"`
				Socket  string `json:"socket,omitempty"`
				Logs    string `json:"logs"`
			}{Running: running, Logs: st.daemonLog()}
			if running {
				out.PID, out.Version, out.Socket = st.daemonPID(), "v"+c.serverVersion(), filepath.Join(st.Root, "sandboxd.sock")
			}
			return json.NewEncoder(c.env.Stdout).Encode(out)
		}
		if running {
			fmt.Fprintf(c.env.Stdout, "Daemon is running (PID %d)\n", st.daemonPID())
		} else {
			fmt.Fprintln(c.env.Stdout, "Daemon is not running")
		}
		return nil
	}
	return fmt.Errorf("unknown command %q for \"sbx daemon\"", fs.args[0])
}

// errSignedOut is real sbx's refusal when signed out; `ls` words it as TP saw at 0.42.1,
// every other verb as Docker's troubleshooting page does. Both exit 1.
func errSignedOut(verb string) error {
	if verb == "ls" {
		return errors.New("Not authenticated to Docker")
	}
	return errors.New("You are not authenticated to Docker. Run 'sbx login' to sign in")
}

func (c *cli) login(_ context.Context, args []string) error {
	fs, err := parseFlags(c.flagsOf("login"), args, true)
	if err != nil {
		return err
	}
	if fs.has("password-stdin") {
		if !fs.has("username") {
			return errors.New("--password-stdin requires --username")
		}
		if c.env.Stdin != nil {
			b, _ := io.ReadAll(io.LimitReader(c.env.Stdin, 1<<16))
			if strings.TrimSpace(string(b)) == "" {
				return errors.New("no password on stdin")
			}
		}
	}
	if err := os.Remove(c.m.Store.signedOutFile()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	fmt.Fprintln(c.env.Stdout, "Login Succeeded")
	return nil
}

// logout is sbx's "Stop all running sandboxes and sign out of Docker".
func (c *cli) logout(ctx context.Context, args []string) error {
	if _, err := parseFlags(c.flagsOf("logout"), args, true); err != nil {
		return err
	}
	if err := c.ensureStateRoot(); err != nil {
		return err
	}
	if err := c.stopAll(ctx); err != nil {
		return err
	}
	if err := os.WriteFile(c.m.Store.signedOutFile(), nil, 0o600); err != nil {
		return err
	}
	fmt.Fprintln(c.env.Stdout, "Removing login credentials for Docker")
	return nil
}

// clientVersion is the sbx version sbxsim plays (SBXSIM_VERSION, default SbxVersion);
// serverVersion the daemon's (SBXSIM_SERVER_VERSION, default the client's).
func (c *cli) clientVersion() string {
	if v, ok := c.env.LookupEnv("SBXSIM_VERSION"); ok && v != "" {
		return strings.TrimPrefix(v, "v")
	}
	return SbxVersion
}

func (c *cli) serverVersion() string {
	if v, ok := c.env.LookupEnv("SBXSIM_SERVER_VERSION"); ok && v != "" {
		return strings.TrimPrefix(v, "v")
	}
	return c.clientVersion()
}

// atLeast reports whether the played version is v or newer (dotted numbers).
func (c *cli) atLeast(v string) bool { return compareVersions(c.clientVersion(), v) >= 0 }

// compareVersions compares dotted version numbers (a pre-release suffix is ignored).
func compareVersions(a, b string) int {
	pa, pb := versionParts(a), versionParts(b)
	for i := range 3 {
		if pa[i] != pb[i] {
			if pa[i] < pb[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func versionParts(v string) [3]int {
	var p [3]int
	v, _, _ = strings.Cut(strings.TrimPrefix(v, "v"), "-")
	for i, s := range strings.SplitN(v, ".", 3) {
		p[i], _ = strconv.Atoi(s)
	}
	return p
}

// commit is what sbxsim prints where sbx prints its git commit.
const commit = "sbxsim-" + Version

func (c *cli) version(_ context.Context, args []string) error {
	fs, err := parseFlags(c.flagsOf("version"), args, true)
	if err != nil {
		return err
	}
	if fs.has("json") {
		type side struct {
			Version string `json:"version"`
			Commit  string `json:"commit"`
		}
		return json.NewEncoder(c.env.Stdout).Encode(struct {
			Client side `json:"client"`
			Server side `json:"server"`
		}{side{"v" + c.clientVersion(), commit}, side{"v" + c.serverVersion(), commit}})
	}
	fmt.Fprintf(c.env.Stdout, "Client Version: v%s %s\nServer Version: v%s %s\n", c.clientVersion(), commit, c.serverVersion(), commit)
	return nil
}

// diagCheck is one check of `diagnose --json` (SBX#496, SBX#332).
type diagCheck struct {
	Name    string `json:"name"`
	Status  string `json:"status"` // pass, warn, fail
	Message string `json:"message"`
	Detail  string `json:"detail,omitempty"`
	Hint    string `json:"hint,omitempty"`
}

// diagnose is `diagnose [--json | --output json]`: it never starts the daemon.
func (c *cli) diagnose(_ context.Context, args []string) error {
	fs, err := parseFlags(c.flagsOf("diagnose"), args, true)
	if err != nil {
		return err
	}
	if o := fs.last("output"); o != "" && o != "json" && o != "github-issue" {
		return fmt.Errorf("invalid --output %q: want json or github-issue", o)
	}
	st := c.m.Store
	checks := []diagCheck{
		{Name: "CLI binary", Status: "pass", Message: "sbx is installed", Detail: c.env.Self},
		{Name: "Binary version", Status: "pass", Message: "v" + c.clientVersion()},
	}
	if st.daemonRunning() {
		checks = append(checks, diagCheck{Name: "Daemon", Status: "pass", Message: fmt.Sprintf("running (PID %d)", st.daemonPID())})
	} else {
		checks = append(checks, diagCheck{Name: "Daemon", Status: "fail", Message: "the daemon is not running", Hint: "sbx daemon start"})
	}
	if v, _ := c.env.LookupEnv("SBXSIM_VIRT"); v == "off" {
		// A host without usable virtualization, as sbx reports it.
		checks = append(checks, diagCheck{Name: "Virtualization", Status: "fail", Message: "hardware virtualization is not available",
			Detail: "/dev/kvm: permission denied", Hint: "sudo usermod -aG kvm $USER"})
	} else {
		checks = append(checks, diagCheck{Name: "Virtualization", Status: "pass", Message: "Linux namespaces (sbxsim: no microVM)"})
	}
	minGB := 2.0
	if v, ok := c.env.LookupEnv("SBXSIM_DISK_MIN_GB"); ok {
		if n, err := strconv.ParseFloat(v, 64); err == nil {
			minGB = n
		}
	}
	checks = append(checks, diskCheck(st.Root, minGB*1e9))
	if c.clientVersion() == c.serverVersion() {
		checks = append(checks, diagCheck{Name: "Version match", Status: "pass", Message: "client and daemon are v" + c.clientVersion()})
	} else {
		checks = append(checks, diagCheck{Name: "Version match", Status: "fail",
			Message: fmt.Sprintf("client v%s, daemon v%s", c.clientVersion(), c.serverVersion()), Hint: "sbx daemon restart"})
	}
	if st.signedIn() {
		checks = append(checks, diagCheck{Name: "Authentication", Status: "pass", Message: "signed in to Docker"})
	} else {
		checks = append(checks, diagCheck{Name: "Authentication", Status: "fail", Message: "Not authenticated to Docker", Hint: "sbx login"})
	}
	if fs.has("json") || fs.last("output") == "json" {
		return json.NewEncoder(c.env.Stdout).Encode(struct {
			Version string      `json:"version"`
			Checks  []diagCheck `json:"checks"`
		}{"1.0", checks})
	}
	for _, ch := range checks {
		fmt.Fprintf(c.env.Stdout, "%-5s %s: %s\n", strings.ToUpper(ch.Status), ch.Name, ch.Message)
	}
	return nil
}

// diskCheck reports the free space where the sandboxes' disks are (the state
// directory): fail under min bytes (SBXSIM_DISK_MIN_GB, default 2 GB), warn under twice
// that.
func diskCheck(root string, min float64) diagCheck {
	dir := root
	for {
		if _, err := os.Stat(dir); err == nil || dir == "/" {
			break
		}
		dir = filepath.Dir(dir)
	}
	var s unix.Statfs_t
	if err := unix.Statfs(dir, &s); err != nil {
		return diagCheck{Name: "Disk space", Status: "warn", Message: "cannot read free space", Detail: err.Error()}
	}
	free := float64(s.Bavail) * float64(s.Bsize)
	c := diagCheck{Name: "Disk space", Status: "pass", Message: fmt.Sprintf("%.1f GB free", free/1e9), Detail: dir}
	switch {
	case free < min:
		c.Status, c.Hint = "fail", "free disk space: sandboxes need a 20 GB root and a 10 GB Docker disk"
	case free < 2*min:
		c.Status, c.Hint = "warn", "free disk space: sandboxes need a 20 GB root and a 10 GB Docker disk"
	}
	return c
}
