//go:build linux

package sbxsim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// createFlags are create's flags (and run's, which creates on first use).
var createFlags = []flagSpec{
	{long: "name", value: true},
	{long: "quiet", short: "q"},
	{long: "cpus", value: true},
	{long: "memory", short: "m", value: true},
	{long: "template", short: "t", value: true},
	{long: "kit", value: true},
}

// createOpts is a validated create request.
type createOpts struct {
	name       string // "" = default name
	agent      string
	workspaces []Workspace
	cpus       string
	memory     int64
	template   string
	hide       []string
	compose    string // docker compose plugin on the host, "" = none
	autoStop   time.Duration
	share      *Share
	pull       string
	cloneRoot  string // --clone: the primary's git root
	resolve    []Resolve
	policyGate bool
	cloud      *Cloud // --cloud: the cloud sandbox's size and TTL
}

// pullSince is the first sbx version whose create and run take --pull (assumed: the
// version the docs that describe it were verified against, v0.46.0; see sbx.Flags).
const pullSince = "0.46.0"

// createFlagSpecs are create's flags in the played version.
func (c *cli) createFlagSpecs() []flagSpec {
	specs := append([]flagSpec(nil), createFlags...)
	if c.atLeast(pullSince) {
		specs = append(specs, flagSpec{long: "pull", value: true})
	}
	return specs
}

func (c *cli) create(ctx context.Context, args []string) error {
	fs, err := parseFlags(c.flagsOf("create"), args, true)
	if err != nil {
		return err
	}
	if err := argCount("create", fs.args, 1); err != nil {
		return err
	}
	o, err := c.createOptions(fs, fs.args[0], fs.args[1:])
	if err != nil {
		return err
	}
	sb, err := c.createSandbox(ctx, o)
	if err != nil {
		return err
	}
	if fs.has("quiet") {
		fmt.Fprintln(c.env.Stdout, sb.Name)
	} else {
		fmt.Fprintf(c.env.Stdout, "Created sandbox '%s' (agent %s, workspace %s)\n", sb.Name, sb.Agent, lines(wsStrings(sb.Workspaces)))
	}
	return nil
}

// createOptions validates create's flags and arguments.
func (c *cli) createOptions(fs flagSet, agent string, paths []string) (createOpts, error) {
	o := createOpts{agent: agent, cpus: fs.last("cpus"), template: fs.last("template"), pull: "always"}
	if fs.has("pull") {
		switch o.pull = fs.last("pull"); o.pull {
		case "always", "missing", "never":
		default:
			return o, fmt.Errorf("invalid --pull %q: must be one of always, missing, never", o.pull)
		}
	}
	if !slices.Contains(agents, agent) {
		return o, fmt.Errorf("unknown agent %q (known: %s)", agent, strings.Join(agents, ", "))
	}
	if fs.has("name") {
		o.name = fs.last("name")
		if err := validateName(o.name); err != nil {
			return o, err
		}
	}
	if o.cpus != "" {
		if n, err := strconv.ParseFloat(o.cpus, 64); err != nil || n < 0 {
			return o, fmt.Errorf("invalid --cpus %q: must be a number >= 0", o.cpus)
		}
	}
	if fs.has("memory") {
		n, err := parseMemory(fs.last("memory"))
		if err != nil {
			return o, err
		}
		o.memory = n
	}
	ws, err := parseWorkspaces(c.env.Cwd, paths)
	if err != nil {
		return o, err
	}
	o.workspaces = ws
	if fs.has("clone") {
		if o.cloneRoot, err = cloneRootOf(ws); err != nil {
			return o, err
		}
	}
	if v, _ := c.env.LookupEnv("SBXSIM_HIDE"); v != "" {
		for _, d := range filepath.SplitList(v) {
			if !filepath.IsAbs(d) {
				return o, fmt.Errorf("SBXSIM_HIDE: %q is not an absolute path", d)
			}
			o.hide = append(o.hide, filepath.Clean(d))
		}
	}
	if o.compose, err = c.composePlugin(); err != nil {
		return o, err
	}
	if o.autoStop, err = autoStopFrom(c.env.LookupEnv); err != nil {
		return o, err
	}
	v, _ := c.env.LookupEnv("SBXSIM_RESOLVE")
	if o.resolve, err = parseResolve(v); err != nil {
		return o, err
	}
	o.policyGate = c.atLeast(V055)
	if o.share, err = shareFrom(c.env.LookupEnv); err != nil {
		return o, err
	}
	return o, nil
}

// parseMemory parses a size in binary units (512m, 4g, 2GiB, 1073741824); sbx's
// minimum is 512 MiB.
func parseMemory(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "ib"), "b")
	mult := int64(1)
	if t != "" {
		if i := strings.IndexByte("kmgt", t[len(t)-1]); i >= 0 {
			mult = 1 << (10 * (i + 1))
			t = t[:len(t)-1]
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("invalid --memory %q: use a size like 512m or 4g", s)
	}
	v := int64(n * float64(mult))
	if v < 512<<20 {
		return 0, fmt.Errorf("invalid --memory %q: the minimum is 512 MiB", s)
	}
	return v, nil
}

// createSandbox claims a name, records the sandbox and starts it; on failure nothing is
// left behind.
func (c *cli) createSandbox(ctx context.Context, o createOpts) (*Sandbox, error) {
	if err := c.presetGate(ctx); err != nil {
		return nil, err
	}
	if err := c.createDelay(ctx); err != nil {
		return nil, err
	}
	sb, err := c.createLocked(ctx, o)
	if err != nil {
		return nil, err
	}
	// Real sbx stops a sandbox nobody attached to (DD cli/manage/local.md).
	if err := c.m.armAutoStop(ctx, sb); err != nil {
		fmt.Fprintf(c.env.Stderr, "WARN: %v\n", err)
	}
	return sb, nil
}

// createDelay waits SBXSIM_CREATE_DELAY (a slow template pull) before anything is
// created.
func (c *cli) createDelay(ctx context.Context) error {
	v, ok := c.env.LookupEnv("SBXSIM_CREATE_DELAY")
	if !ok || v == "" {
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return fmt.Errorf("SBXSIM_CREATE_DELAY: %q is not a duration like 40s", v)
	}
	fmt.Fprintf(c.env.Stderr, "Pulling template (SBXSIM_CREATE_DELAY %s)...\n", d)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// createLocked does createSandbox's work under the new sandbox's lock.
func (c *cli) createLocked(ctx context.Context, o createOpts) (*Sandbox, error) {
	name, err := c.claimName(o)
	if err != nil {
		return nil, err
	}
	l, err := c.m.Store.Lock(ctx, name)
	if err != nil {
		_ = c.m.Store.discard(name)
		return nil, err
	}
	defer l.Unlock()
	sb := &Sandbox{Name: name, Agent: o.agent, Workspaces: o.workspaces, CPUs: o.cpus, Memory: o.memory,
		Template: o.template, Docker: c.docker(), Hide: o.hide, Compose: o.compose, Created: time.Now().UTC(),
		AutoStop: o.autoStop, Pull: o.pull, SSHAgent: c.sshAgentSocket(), Resolve: o.resolve, PolicyGate: o.policyGate,
		Share: o.share, Cloud: o.cloud}
	if o.cloneRoot != "" {
		if sb.Clone, err = c.m.newClone(name, o.cloneRoot); err != nil {
			_ = c.m.Store.discard(name)
			return nil, err
		}
	}
	if err := c.m.Store.Save(sb); err != nil {
		_ = c.m.Store.discard(name)
		return nil, err
	}
	if o.pull == "always" {
		// sbx re-pulls the template on every create unless told otherwise; sbxsim has
		// nothing to pull, only the note.
		fmt.Fprintf(c.env.Stderr, "Pulling template for %s (--pull always)...\n", o.agent)
	}
	if err := c.m.start(ctx, sb); err != nil { // start has ended whatever it started
		if sb.Clone != nil {
			_ = c.m.dropRemote(context.WithoutCancel(ctx), sb)
		}
		_ = c.m.Store.discard(name)
		return nil, fmt.Errorf("creating sandbox %s: %w", name, err)
	}
	return sb, nil
}

// claimName reserves the requested name, or the default one; a default name already in
// use gets a numeric suffix, with sbx's note.
func (c *cli) claimName(o createOpts) (string, error) {
	if o.name != "" {
		err := c.m.Store.reserve(o.name)
		if errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("sandbox '%s' already exists", o.name)
		}
		return o.name, err
	}
	base := defaultName(o.agent, primaryOf(o.workspaces))
	for i := 1; i < 1000; i++ {
		name := base
		if i > 1 {
			suffix := "-" + strconv.Itoa(i)
			name = strings.TrimRight(base[:min(len(base), 63-len(suffix))], "-.") + suffix
		}
		err := c.m.Store.reserve(name)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if i > 1 {
			fmt.Fprintf(c.env.Stderr, "Note: sandbox %q already exists for this workspace. Creating %q instead.\n", base, name)
		}
		return name, nil
	}
	return "", fmt.Errorf("no free sandbox name like %q", base)
}

func primaryOf(ws []Workspace) string {
	if len(ws) == 0 {
		return ""
	}
	return ws[0].Path
}

func wsStrings(ws []Workspace) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.String())
	}
	return out
}
