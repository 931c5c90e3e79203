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
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"
)

// Cloud sandboxes (`sbx --cloud VERB`, experimental since sbx 0.45): the same verbs on
// sandboxes in Docker's cloud. What sbxsim plays of it (docs/sbxsim.md, "Cloud"): no
// workspace mount (files go in and out with cp), sizes, a TTL with an action when it
// ends, the account's quota, the exec flags cloud refuses, a WAN's round trip on every
// exec stream and cp (SBXSIM_CLOUD_RTT), and published ports as public https URLs.
// Cloud sandboxes live in a store of their own (SBXSIM_STATE/cloud), so that `ls` and
// `--cloud ls` list disjoint sets and a name may exist on both sides, as local and
// cloud are separate in sbx; the daemon and the signed-in state stay the local store's.

// cloudSince is the first sbx with --cloud (the contract's Cloud section).
const cloudSince = "0.45.0"

// Cloud is a cloud sandbox's record. Durations are in the simulated clock, which runs
// Scale times faster than the real one from Created on (SBXSIM_CLOUD_TTL_SCALE), so
// that a test sees an hour's TTL end in a second.
type Cloud struct {
	Size string `json:"size"`
	// TTL is create's --ttl: the lifetime a start after a timeout gives again.
	TTL time.Duration `json:"ttl"`
	// Lifetime is how long after its creation the sandbox times out; `ttl` extends it,
	// up to cloudMaxLifetime.
	Lifetime  time.Duration `json:"lifetime"`
	OnTimeout string        `json:"onTimeout"`
	Scale     float64       `json:"scale"`
	// RTT is SBXSIM_CLOUD_RTT at create; the variable, when set, overrides it per command.
	RTT time.Duration `json:"rtt,omitempty"`
	// CA is the test CA's certificate file (SBXSIM_CLOUD_CA at create), whose
	// certificates the published ports' URLs present.
	CA string `json:"ca"`
	// TimedOut is set when the TTL ended and on-timeout was applied.
	TimedOut bool `json:"timedOut,omitempty"`
}

// cloudSizes are the sizes --size takes (DD cli/manage/cloud.md: micro 1 CPU/2 GB to xl
// 16/32 GB; the default, 2 CPU/4 GiB, is small; the middle ones are assumed doublings).
var cloudSizes = []struct {
	name   string
	cpus   string
	memory int64
}{
	{"micro", "1", 2 << 30}, {"small", "2", 4 << 30}, {"medium", "4", 8 << 30},
	{"large", "8", 16 << 30}, {"xl", "16", 32 << 30},
}

const (
	cloudDefaultSize = "small"
	cloudDefaultTTL  = time.Hour
	// cloudMaxLifetime bounds a cloud sandbox's TTL from its creation.
	cloudMaxLifetime = 24 * time.Hour
	// cloudConcurrent and cloudStored are the account's quotas (the contract's Cloud
	// section: 10 concurrent sandboxes, 50 stored).
	cloudConcurrent = 10
	cloudStored     = 50
	// cloudWorkspace is where a mountless sandbox's exec starts (sbx-2026-12 notes).
	cloudWorkspace = AgentHome + "/workspace"
)

// cloudKnobs are the SBXSIM_CLOUD_* lines of --help.
const cloudKnobs = "" +
	"  SBXSIM_CLOUD_RTT=DURATION   cloud sandboxes: added round trip (e.g. 40ms), recorded at create and\n" +
	"                              overridden per command: RTT/2 before an exec starts, on each stdin\n" +
	"                              chunk into it and on each output chunk out of it (order kept, the\n" +
	"                              exit status last); one RTT per cp\n" +
	"  SBXSIM_CLOUD_TTL_SCALE=F    cloud sandboxes created now live on a clock F times faster (default 1):\n" +
	"                              with 3600, --ttl 1h ends after one real second\n" +
	"  SBXSIM_CLOUD_CA=FILE        cloud sandboxes created now: the test CA (PEM; its key in FILE.key, both\n" +
	"                              made on first publish) whose certificates their public https URLs\n" +
	"                              present (default SBXSIM_STATE/cloud/ca.pem): trust FILE to reach them\n"

// cloudUsage prints the cloud verbs, after the local ones.
func cloudUsage(w io.Writer) {
	fmt.Fprintf(w, "Cloud (sbx --cloud VERB, sbx >= %s; cloud sandboxes are listed apart from local ones):\n"+
		"  sbx --cloud create [--name N] [-q] [--size micro|small|medium|large|xl] [--ttl D] [--on-timeout stop|restart|delete] AGENT\n"+
		"      no PATH: cloud sandboxes mount nothing; names without periods; default size small, ttl 1h (at most 24h)\n"+
		"  sbx --cloud run -d [--name N] AGENT | run --name N -d   (run takes no --size, --ttl, --on-timeout:\n"+
		"      the contract table has them on create only)\n"+
		"  sbx --cloud cp SRC DST        one side SANDBOX:/abs/path, directories recursively, point in time\n"+
		"  sbx --cloud exec [-i] [-t] [-e K=V] [-w DIR] SANDBOX CMD...   (-d, -u, --privileged refused)\n"+
		"  sbx --cloud ttl SANDBOX [+D|D] [--json]   +D extends, D sets what is left; at most 24h from creation\n"+
		"  sbx --cloud ports SANDBOX --publish PORT[/tcp] [--json] | port publish SANDBOX PORT\n"+
		"      a public URL https://127.0.0.1:HOSTPORT (a TLS front of sbxsim's test CA, SBXSIM_CLOUD_CA)\n"+
		"  sbx --cloud ls|stop|rm|inspect   as local, on cloud sandboxes\n"+
		"  quota: %d concurrent (running) and %d stored cloud sandboxes\n", cloudSince, cloudConcurrent, cloudStored)
}

// cloudCommands is the verb table under --cloud: the verbs that act on sandboxes go to
// the cloud store (their cloud forms where cloud differs), and ttl is added.
func cloudCommands(cmds []command) []command {
	cloudRun := map[string]func(c *cli, ctx context.Context, args []string) error{
		"create": (*cli).cloudCreate,
		"run":    (*cli).cloudRunVerb,
		"exec":   (*cli).cloudExec,
		"cp":     (*cli).cloudCp,
		"ls":     (*cli).cloudLs,
		"ports":  (*cli).cloudPorts,
		"port":   (*cli).cloudPort,
	}
	out := make([]command, 0, len(cmds)+1)
	for _, cmd := range cmds {
		switch f, ok := cloudRun[cmd.name]; {
		case ok:
			cmd.run = f
		case cmd.name == "stop" || cmd.name == "rm" || cmd.name == "inspect":
			local := cmd.run
			cmd.run = func(c *cli, ctx context.Context, args []string) error {
				c.enterCloud(ctx)
				return local(c, ctx, args)
			}
		}
		out = append(out, cmd)
	}
	return append(out, command{"ttl", "ttl SANDBOX [+DURATION|DURATION] [--json]", cloudSince, true, needsSignIn, (*cli).cloudTTL})
}

// enterCloud points the command at the cloud store (after the daemon and the sign-in
// were checked against the local one) and applies any TTL that ended while its watcher
// was not there to (a killed watcher, a reboot).
func (c *cli) enterCloud(ctx context.Context) {
	c.m.Store.Root = filepath.Join(c.m.Store.Root, "cloud")
	c.sweepTimeouts(ctx)
}

// cloudFlagsOf returns the flags a verb's parser takes under --cloud: the contract's
// (sbx.Verb.CloudFlagsAt, held equal by TestSimAcceptsTheCloudContract) and the ones
// cloud refuses with a message of its own (cloudRefused).
func (c *cli) cloudFlagsOf(verb string) []flagSpec {
	specs := c.flagsOf(verb)
	switch verb {
	case "create":
		specs = append(specs, flagSpec{long: "size", value: true}, flagSpec{long: "ttl", value: true},
			flagSpec{long: "on-timeout", value: true})
	case "ttl":
		specs = []flagSpec{{long: "json"}}
	}
	return specs
}

// cloudRefused are the flags a verb parses under --cloud only to refuse them (the
// contract's Local flags): exec's -u and --privileged here, -d as everywhere; create's
// --clone (no host workspace to clone).
var cloudRefused = map[string][]string{"exec": {"user", "detach", "privileged"}, "create": {"clone"}}

// cloudOptions validates a cloud create: the local rules, then cloud's.
func (c *cli) cloudOptions(fs flagSet, agent string, paths []string) (createOpts, error) {
	if len(paths) > 0 {
		return createOpts{}, fmt.Errorf("cloud sandboxes have no workspace mount: cannot mount %q "+
			"(copy files in with 'sbx --cloud cp', or clone inside the sandbox)", paths[0])
	}
	if fs.has("clone") {
		return createOpts{}, errors.New("--clone is not supported for cloud sandboxes: they have no workspace mount " +
			"(clone inside the sandbox)")
	}
	for _, f := range []string{"cpus", "memory"} {
		if fs.has(f) {
			return createOpts{}, fmt.Errorf("--%s is not supported for cloud sandboxes (choose a --size)", f)
		}
	}
	if strings.Contains(fs.last("name"), ".") {
		return createOpts{}, fmt.Errorf("invalid sandbox name %q: cloud sandbox names cannot contain periods", fs.last("name"))
	}
	o, err := c.createOptions(fs, agent, nil)
	if err != nil {
		return o, err
	}
	// Cloud sandboxes do not stop when idle (the TTL ends them), read nothing of the
	// host over a share, and their network policy is Docker governance's, not the
	// local preset's.
	o.autoStop, o.share, o.policyGate = 0, nil, false
	cl := &Cloud{Size: cloudDefaultSize, TTL: cloudDefaultTTL, OnTimeout: "stop", Scale: 1}
	if fs.has("size") {
		cl.Size = fs.last("size")
	}
	found := false
	for _, s := range cloudSizes {
		if s.name == cl.Size {
			o.cpus, o.memory, found = s.cpus, s.memory, true
		}
	}
	if !found {
		return o, fmt.Errorf("invalid --size %q: must be one of micro, small, medium, large, xl", cl.Size)
	}
	if fs.has("ttl") {
		if cl.TTL, err = parseTTL("--ttl", fs.last("ttl")); err != nil {
			return o, err
		}
	}
	if fs.has("on-timeout") {
		switch cl.OnTimeout = fs.last("on-timeout"); cl.OnTimeout {
		case "stop", "restart", "delete":
		default:
			return o, fmt.Errorf("invalid --on-timeout %q: must be one of stop, restart, delete", cl.OnTimeout)
		}
	}
	cl.Lifetime = cl.TTL
	if v, ok := c.env.LookupEnv("SBXSIM_CLOUD_TTL_SCALE"); ok && v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			return o, fmt.Errorf("SBXSIM_CLOUD_TTL_SCALE: %q is not a number > 0", v)
		}
		cl.Scale = f
	}
	if cl.RTT, err = c.cloudRTTEnv(); err != nil {
		return o, err
	}
	if cl.CA, _ = c.cloudCAPaths(); !filepath.IsAbs(cl.CA) {
		return o, fmt.Errorf("SBXSIM_CLOUD_CA: %q is not an absolute path", cl.CA)
	}
	o.cloud = cl
	return o, nil
}

// parseTTL parses a TTL: a Go duration (30m, 1h30m) or a number of seconds, more than
// 0 and at most 24h.
func parseTTL(flag, s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		n, nerr := strconv.Atoi(s)
		if nerr != nil {
			return 0, fmt.Errorf("invalid %s %q: use a duration like 30m or 2h", flag, s)
		}
		d = time.Duration(n) * time.Second
	}
	switch {
	case d <= 0:
		return 0, fmt.Errorf("invalid %s %q: the TTL must be greater than 0", flag, s)
	case d > cloudMaxLifetime:
		return 0, fmt.Errorf("invalid %s %q: the TTL is at most 24h", flag, s)
	}
	return d, nil
}

// cloudRTTEnv is SBXSIM_CLOUD_RTT, 0 when unset.
func (c *cli) cloudRTTEnv() (time.Duration, error) {
	v, ok := c.env.LookupEnv("SBXSIM_CLOUD_RTT")
	if !ok || v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("SBXSIM_CLOUD_RTT: %q is not a duration like 40ms", v)
	}
	return d, nil
}

// rttOf is the round trip a command on sb pays: SBXSIM_CLOUD_RTT when set, else what
// was recorded at create.
func (c *cli) rttOf(sb *Sandbox) (time.Duration, error) {
	if v, ok := c.env.LookupEnv("SBXSIM_CLOUD_RTT"); ok && v != "" {
		return c.cloudRTTEnv()
	}
	if sb != nil && sb.Cloud != nil {
		return sb.Cloud.RTT, nil
	}
	return 0, nil
}

func (c *cli) cloudCreate(ctx context.Context, args []string) error {
	c.enterCloud(ctx)
	fs, err := parseFlags(c.cloudFlagsOf("create"), args, true)
	if err != nil {
		return err
	}
	if err := argCount("create", fs.args, 1); err != nil {
		return err
	}
	o, err := c.cloudOptions(fs, fs.args[0], fs.args[1:])
	if err != nil {
		return err
	}
	sb, err := c.createCloudSandbox(ctx, o)
	if err != nil {
		return err
	}
	if fs.has("quiet") {
		fmt.Fprintln(c.env.Stdout, sb.Name)
	} else {
		fmt.Fprintf(c.env.Stdout, "Created cloud sandbox '%s' (agent %s, size %s, ttl %s, on timeout %s)\n",
			sb.Name, sb.Agent, sb.Cloud.Size, sb.Cloud.TTL, sb.Cloud.OnTimeout)
	}
	return nil
}

// cloudRunVerb is run under --cloud: start an existing cloud sandbox, or create one
// (detached: sbxsim has no agent session to attach).
func (c *cli) cloudRunVerb(ctx context.Context, args []string) error {
	c.enterCloud(ctx)
	fs, err := parseFlags(c.cloudFlagsOf("run"), args, true)
	if err != nil {
		return err
	}
	if !fs.has("detach") {
		return errors.New("sbxsim cannot open an agent session: use `run -d` and then `exec`")
	}
	if name := fs.last("name"); name != "" {
		if _, err := c.m.Store.Load(name); err == nil {
			for _, f := range []string{"template", "memory", "cpus"} {
				if fs.has(f) {
					return fmt.Errorf("--%s can only be used when creating a sandbox; %q already exists", f, name)
				}
			}
			sb, err := c.cloudStart(ctx, name)
			if err != nil {
				return err
			}
			fmt.Fprintln(c.env.Stdout, sb.Name)
			return nil
		}
	}
	if err := argCount("run", fs.args, 1); err != nil {
		if name := fs.last("name"); name != "" {
			return errNoSandbox{name}
		}
		return err
	}
	o, err := c.cloudOptions(fs, fs.args[0], fs.args[1:])
	if err != nil {
		return err
	}
	sb, err := c.createCloudSandbox(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprintln(c.env.Stdout, sb.Name)
	return nil
}

// createCloudSandbox creates and starts a cloud sandbox within the account's quota:
// the count and the creation happen under one lock, so that ten sessions creating at
// once get exactly ten sandboxes. It then gives the sandbox its empty workspace and its
// TTL watcher.
func (c *cli) createCloudSandbox(ctx context.Context, o createOpts) (*Sandbox, error) {
	if err := c.createDelay(ctx); err != nil {
		return nil, err
	}
	sb, err := c.withQuotaLock(ctx, func() (*Sandbox, error) {
		if err := c.checkQuota(true); err != nil {
			return nil, err
		}
		if err := c.sleepRTT(ctx, o.cloud.RTT); err != nil {
			return nil, err
		}
		return c.createLocked(ctx, o)
	})
	if err != nil {
		return nil, err
	}
	// The workspace of a mountless sandbox, empty, in agent's persistent home.
	ws := filepath.Join(c.m.Store.dir(sb.Name), "home", "workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return nil, fmt.Errorf("creating the workspace of %s: %w", sb.Name, err)
	}
	if err := os.Chown(ws, AgentUID, AgentGID); err != nil {
		return nil, fmt.Errorf("creating the workspace of %s: %w", sb.Name, err)
	}
	if err := c.m.armCloudTTL(ctx, sb.Name); err != nil {
		fmt.Fprintf(c.env.Stderr, "WARN: %v\n", err)
	}
	return sb, nil
}

// withQuotaLock runs f holding the cloud store's quota lock.
func (c *cli) withQuotaLock(ctx context.Context, f func() (*Sandbox, error)) (*Sandbox, error) {
	if err := os.MkdirAll(c.m.Store.Root, 0o700); err != nil {
		return nil, fmt.Errorf("creating the cloud state: %w", err)
	}
	lf, err := os.OpenFile(filepath.Join(c.m.Store.Root, "quota.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the cloud quota lock: %w", err)
	}
	defer lf.Close()
	if err := flockCtx(ctx, lf); err != nil {
		return nil, fmt.Errorf("locking the cloud quota: %w", err)
	}
	defer func() { _ = unix.Flock(int(lf.Fd()), unix.LOCK_UN) }()
	return f()
}

// checkQuota refuses to run one more cloud sandbox beyond the account's quotas (and,
// creating, to keep one more). A sandbox being created (no state yet) counts as running.
func (c *cli) checkQuota(creating bool) error {
	ents, err := os.ReadDir(filepath.Join(c.m.Store.Root, "sandboxes"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("counting cloud sandboxes: %w", err)
	}
	running := 0
	for _, e := range ents {
		sb, err := c.m.Store.Load(e.Name())
		if err != nil || sb.Running() {
			running++
		}
	}
	if running >= cloudConcurrent {
		return fmt.Errorf("quota exceeded: your account can run at most %d cloud sandboxes at once (%d running); "+
			"stop or remove one first", cloudConcurrent, running)
	}
	if creating && len(ents) >= cloudStored {
		return fmt.Errorf("quota exceeded: your account can keep at most %d cloud sandboxes (%d exist); remove one first",
			cloudStored, len(ents))
	}
	return nil
}

// cloudStart starts a cloud sandbox if it is stopped; one whose TTL ended gets its TTL
// again from now (so that its files can still be copied out), and its watcher.
func (c *cli) cloudStart(ctx context.Context, name string) (*Sandbox, error) {
	if err := c.renewIfTimedOut(ctx, name); err != nil {
		return nil, err
	}
	sb, err := c.m.Store.Load(name)
	if err != nil {
		return nil, err
	}
	if !sb.Running() {
		// Starting one counts against the quota as creating one does.
		sb, err = c.withQuotaLock(ctx, func() (*Sandbox, error) {
			if cur, err := c.m.Store.Load(name); err == nil && cur.Running() {
				return cur, nil
			}
			if err := c.checkQuota(false); err != nil {
				return nil, err
			}
			return c.m.ensureRunning(ctx, name)
		})
		if err != nil {
			return nil, err
		}
	}
	if err := c.m.armCloudTTL(ctx, name); err != nil {
		fmt.Fprintf(c.env.Stderr, "WARN: %v\n", err)
	}
	return sb, nil
}

// renewIfTimedOut gives a stopped cloud sandbox whose TTL ended its TTL again, from now.
func (c *cli) renewIfTimedOut(ctx context.Context, name string) error {
	sb, err := c.m.Store.Load(name)
	if err != nil || sb.Cloud == nil || sb.Running() || !sb.Cloud.expired(sb.Created, time.Now()) {
		return nil
	}
	l, err := c.m.Store.Lock(ctx, name)
	if err != nil {
		return nil
	}
	defer l.Unlock()
	if sb, err = c.m.Store.Load(name); err != nil || sb.Cloud == nil || sb.Running() {
		return nil
	}
	now := time.Now()
	if sb.Cloud.expired(sb.Created, now) {
		sb.Cloud.Lifetime = sb.Cloud.elapsed(sb.Created, now) + sb.Cloud.TTL
		sb.Cloud.TimedOut = false
		return c.m.Store.Save(sb)
	}
	return nil
}

// cloudExec is exec in a cloud sandbox: the flags cloud refuses are refused, the
// command starts in the empty workspace unless -w says otherwise, and every stream
// pays the round trip.
func (c *cli) cloudExec(ctx context.Context, args []string) error {
	c.enterCloud(ctx)
	r, err := c.parseExec(args)
	if err != nil {
		return err
	}
	switch {
	case r.user != "":
		return errors.New("--user is not supported for cloud sandboxes")
	case r.privileged:
		return errors.New("--privileged is not supported for cloud sandboxes")
	}
	sb, err := c.m.Store.Load(r.name)
	if err != nil {
		return err
	}
	if _, err := c.cloudStart(ctx, r.name); err != nil {
		return err
	}
	rtt, err := c.rttOf(sb)
	if err != nil {
		return err
	}
	// exec's flags end at the sandbox's name: a -w of the caller's comes later and wins.
	args = append([]string{"--workdir=" + cloudWorkspace}, args...)
	if rtt <= 0 {
		return c.exec(ctx, args)
	}
	return c.overWAN(ctx, rtt, r.interactive && !r.tty, func() error { return c.exec(ctx, args) })
}

// cloudCp is cp with a cloud sandbox: one round trip more than a local one.
func (c *cli) cloudCp(ctx context.Context, args []string) error {
	c.enterCloud(ctx)
	fs, err := parseFlags(c.flagsOf("cp"), args, true)
	if err != nil {
		return err
	}
	for _, a := range fs.args {
		name, _ := splitCpArg(a)
		if name == "" {
			continue
		}
		sb, err := c.m.Store.Load(name)
		if err != nil {
			return notFound(err)
		}
		if _, err := c.cloudStart(ctx, name); err != nil {
			return notFound(err)
		}
		rtt, err := c.rttOf(sb)
		if err != nil {
			return err
		}
		if err := c.sleepRTT(ctx, rtt); err != nil {
			return err
		}
	}
	return c.cp(ctx, args)
}

// sleepRTT waits one round trip.
func (c *cli) sleepRTT(ctx context.Context, rtt time.Duration) error {
	if rtt <= 0 {
		return nil
	}
	t := time.NewTimer(rtt)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// cloudLsEntry is one sandbox of `--cloud ls --json`: ls's fields and the cloud's.
type cloudLsEntry struct {
	lsEntry
	Size      string `json:"size"`
	OnTimeout string `json:"on_timeout"`
	// ExpiresAt is when the TTL ends, in real time; TTLLeft is what is left of it in
	// the simulated clock (SBXSIM_CLOUD_TTL_SCALE), "0s" once it ended.
	ExpiresAt time.Time `json:"expires_at"`
	TTLLeft   string    `json:"ttl_left"`
	URLs      []string  `json:"urls"`
}

func (c *cli) cloudLs(ctx context.Context, args []string) error {
	c.enterCloud(ctx)
	fs, err := parseFlags(c.flagsOf("ls"), args, true)
	if err != nil {
		return err
	}
	all, err := c.m.Store.List()
	if err != nil {
		return err
	}
	now := time.Now()
	entries := []cloudLsEntry{}
	for _, sb := range all {
		e := cloudLsEntry{lsEntry: lsEntry{Name: sb.Name, Status: sb.Status(), Agent: sb.Agent,
			Workspaces: []string{}, Ports: publicPorts(sb)}, URLs: c.cloudURLs(sb)}
		if cl := sb.Cloud; cl != nil {
			e.Size, e.OnTimeout = cl.Size, cl.OnTimeout
			e.ExpiresAt = cl.expiry(sb.Created).UTC().Truncate(time.Millisecond)
			e.TTLLeft = cl.left(sb.Created, now).String()
		}
		entries = append(entries, e)
	}
	switch {
	case fs.has("json"):
		enc := json.NewEncoder(c.env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Sandboxes []cloudLsEntry `json:"sandboxes"`
		}{entries})
	case fs.has("quiet"):
		for _, e := range entries {
			fmt.Fprintln(c.env.Stdout, e.Name)
		}
		return nil
	}
	tw := tabwriter.NewWriter(c.env.Stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "SANDBOX\tAGENT\tSTATUS\tSIZE\tTTL\tURLS")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.Name, e.Agent, e.Status, e.Size, e.TTLLeft, lines(e.URLs))
	}
	return tw.Flush()
}

// cloudTTL is `sbx --cloud ttl SANDBOX [+D|D]`: +D extends the TTL by D, D sets what is
// left of it to D; the lifetime is at most 24h from creation. Without a duration it
// prints the TTL.
func (c *cli) cloudTTL(ctx context.Context, args []string) error {
	c.enterCloud(ctx)
	fs, err := parseFlags(c.cloudFlagsOf("ttl"), args, true)
	if err != nil {
		return err
	}
	if len(fs.args) < 1 || len(fs.args) > 2 {
		return errors.New("\"sbx ttl\" requires a sandbox and a duration like +30m")
	}
	name := fs.args[0]
	sb, err := c.m.Store.Load(name)
	if err != nil {
		return err
	}
	if sb.Cloud == nil {
		return fmt.Errorf("sandbox '%s' is not a cloud sandbox", name)
	}
	if len(fs.args) == 2 {
		if sb, err = c.changeTTL(ctx, name, fs.args[1]); err != nil {
			return err
		}
	}
	now := time.Now()
	cl := sb.Cloud
	if fs.has("json") {
		enc := json.NewEncoder(c.env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"name": sb.Name, "ttl_left": cl.left(sb.Created, now).String(),
			"expires_at": cl.expiry(sb.Created).UTC().Truncate(time.Millisecond), "on_timeout": cl.OnTimeout,
			"lifetime": cl.Lifetime.String(), "max_lifetime": cloudMaxLifetime.String()})
	}
	fmt.Fprintf(c.env.Stdout, "Sandbox '%s' times out in %s (on timeout: %s)\n", sb.Name, cl.left(sb.Created, now), cl.OnTimeout)
	return nil
}

// changeTTL applies a ttl argument under the sandbox's lock.
func (c *cli) changeTTL(ctx context.Context, name, arg string) (*Sandbox, error) {
	extend := strings.HasPrefix(arg, "+")
	d, err := time.ParseDuration(strings.TrimPrefix(arg, "+"))
	if err != nil || d <= 0 {
		return nil, fmt.Errorf("invalid TTL %q: use a duration like +30m (extend) or 2h (from now)", arg)
	}
	l, err := c.m.Store.Lock(ctx, name)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	sb, err := c.m.Store.Load(name)
	if err != nil {
		return nil, err
	}
	cl := sb.Cloud
	now := time.Now()
	life := cl.elapsed(sb.Created, now) + d
	if extend {
		life = max(cl.Lifetime, cl.elapsed(sb.Created, now)) + d
	}
	if life > cloudMaxLifetime {
		return nil, fmt.Errorf("cannot set the TTL of sandbox '%s' to %s: a cloud sandbox lives at most 24h from its creation "+
			"(it can be extended by at most %s)", name, arg,
			(cloudMaxLifetime - max(cl.Lifetime, cl.elapsed(sb.Created, now))).Truncate(time.Second))
	}
	cl.Lifetime, cl.TimedOut = life, false
	if err := c.m.Store.Save(sb); err != nil {
		return nil, err
	}
	return sb, nil
}

// elapsed is the simulated time since creation.
func (cl *Cloud) elapsed(created, now time.Time) time.Duration {
	return time.Duration(float64(now.Sub(created)) * cl.scale())
}

func (cl *Cloud) scale() float64 {
	if cl.Scale <= 0 {
		return 1
	}
	return cl.Scale
}

// expiry is the real time at which the TTL ends.
func (cl *Cloud) expiry(created time.Time) time.Time {
	return created.Add(time.Duration(float64(cl.Lifetime) / cl.scale()))
}

// expired reports whether the TTL has ended at now.
func (cl *Cloud) expired(created, now time.Time) bool { return !now.Before(cl.expiry(created)) }

// left is what is left of the TTL at now, in the simulated clock.
func (cl *Cloud) left(created, now time.Time) time.Duration {
	return max(0, cl.Lifetime-cl.elapsed(created, now)).Truncate(time.Second)
}
