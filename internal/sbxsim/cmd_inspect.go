//go:build linux

package sbxsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"golang.org/x/sys/unix"

	"go.yaml.in/yaml/v3"
)

// outputFormat reads --json / --format table|json|yaml.
func outputFormat(f flagSet) (string, error) {
	format := "table"
	if f.has("format") {
		format = f.last("format")
	}
	if f.has("json") {
		format = "json"
	}
	switch format {
	case "table", "json", "yaml":
		return format, nil
	}
	return "", fmt.Errorf("invalid --format %q: must be one of table, json, yaml", format)
}

// printAs writes v as JSON or YAML (the same keys: the yaml encoder reads the json
// tags through a JSON round trip).
func (c *cli) printAs(format string, v any) error {
	if format == "json" {
		return c.printJSON(v)
	}
	var generic any
	if err := roundTripJSON(v, &generic); err != nil {
		return err
	}
	enc := yaml.NewEncoder(c.env.Stdout)
	enc.SetIndent(2)
	if err := enc.Encode(generic); err != nil {
		return err
	}
	return enc.Close()
}

// port is `port ls|publish|unpublish SANDBOX [SPEC…]` (sbx ≥ 0.55).
func (c *cli) port(ctx context.Context, args []string) error {
	f, err := parseFlags(c.flagsOf("port"), args, true)
	if err != nil {
		return err
	}
	format, err := outputFormat(f)
	if err != nil {
		return err
	}
	if len(f.args) < 2 {
		return errors.New(`"sbx port" requires a subcommand (ls, publish, unpublish) and a sandbox`)
	}
	sub, name, specs := f.args[0], f.args[1], f.args[2:]
	var publish []Port
	var unpublish []string
	switch sub {
	case "ls":
		if len(specs) > 0 {
			return errors.New(`"sbx port ls" takes exactly 1 argument`)
		}
	case "publish":
		if len(specs) == 0 {
			return errors.New(`"sbx port publish" requires at least one port spec`)
		}
		for _, s := range specs {
			p, err := parsePortSpec(s)
			if err != nil {
				return err
			}
			publish = append(publish, p)
		}
	case "unpublish":
		if len(specs) == 0 {
			return errors.New(`"sbx port unpublish" requires at least one port spec`)
		}
		unpublish = specs
	default:
		return fmt.Errorf("unknown command %q for \"sbx port\"", sub)
	}
	sb, err := c.m.Store.Load(name)
	if err != nil {
		return err
	}
	if sub != "ls" {
		if sb, err = c.changePorts(ctx, name, publish, unpublish); err != nil {
			return err
		}
		if len(publish) > 0 {
			if err := c.m.armAutoStop(ctx, sb); err != nil {
				fmt.Fprintf(c.env.Stderr, "WARN: %v\n", err)
			}
		}
	}
	ports := publicPorts(sb)
	if format != "table" {
		return c.printAs(format, ports)
	}
	if len(ports) == 0 {
		fmt.Fprintln(c.env.Stdout, "No published ports")
		return nil
	}
	tw := tabwriter.NewWriter(c.env.Stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST IP\tHOST PORT\tSANDBOX PORT\tPROTOCOL")
	for _, p := range ports {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", p.HostIP, p.HostPort, p.SandboxPort, p.Protocol)
	}
	return tw.Flush()
}

// inspectMount is one mount in `inspect --json`.
type inspectMount struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"read_only"`
}

// inspectNetwork is the sandbox's network policy in `inspect --json`.
type inspectNetwork struct {
	Preset        string `json:"preset"`
	OrgGovernance bool   `json:"org_governance"`
	Rules         []Rule `json:"rules"`
}

// inspectView is `inspect --json` (fields from the CLI reference, key names assumed).
type inspectView struct {
	Name       string         `json:"name"`
	Agent      string         `json:"agent"`
	Status     string         `json:"status"`
	AuthMode   string         `json:"auth_mode"`
	Kits       []string       `json:"kits"`
	Workspaces []string       `json:"workspaces"`
	Mounts     []inspectMount `json:"mounts"`
	Network    inspectNetwork `json:"network"`
	Secrets    []string       `json:"secrets"`
	Ports      []Port         `json:"ports"`
	Sessions   int            `json:"sessions"`
}

// inspect is `inspect SANDBOX [--json|--format …]` (sbx ≥ 0.55).
func (c *cli) inspect(_ context.Context, args []string) error {
	f, err := parseFlags(c.flagsOf("inspect"), args, true)
	if err != nil {
		return err
	}
	format, err := outputFormat(f)
	if err != nil {
		return err
	}
	if len(f.args) != 1 {
		return errors.New(`"sbx inspect" requires exactly 1 argument`)
	}
	sb, err := c.m.Store.Load(f.args[0])
	if err != nil {
		return err
	}
	p, err := c.m.Store.LoadPolicy()
	if err != nil {
		return err
	}
	o := c.m.Store.LoadOrg()
	v := inspectView{Name: sb.Name, Agent: sb.Agent, Status: sb.Status(), AuthMode: "oauth", Kits: []string{},
		Workspaces: wsStrings(sb.Workspaces), Mounts: []inspectMount{}, Secrets: []string{}, Ports: publicPorts(sb),
		Network: inspectNetwork{Preset: p.Preset, OrgGovernance: o.Active, Rules: []Rule{}}}
	if sb.Template != "" {
		v.Kits = append(v.Kits, sb.Template)
	}
	if v.Workspaces == nil {
		v.Workspaces = []string{}
	}
	for _, w := range sb.Workspaces {
		v.Mounts = append(v.Mounts, inspectMount{Source: w.Path, Target: w.Path, ReadOnly: w.ReadOnly})
	}
	for _, r := range effectiveRules(p, o, sb.Name) {
		if r.Source != "preset" {
			v.Network.Rules = append(v.Network.Rules, r)
		}
	}
	if sb.Running() {
		v.Sessions = c.m.Store.openSessions(sb.Name)
	}
	if format != "table" {
		return c.printAs(format, v)
	}
	var ports []string
	for _, pt := range v.Ports {
		ports = append(ports, pt.String())
	}
	preset := v.Network.Preset
	if preset == "" {
		preset = "(none)"
	}
	tw := tabwriter.NewWriter(c.env.Stdout, 0, 8, 2, ' ', 0)
	for _, row := range [][2]string{
		{"Name", v.Name}, {"Agent", v.Agent}, {"Status", v.Status}, {"Auth", v.AuthMode},
		{"Kits", lines(v.Kits)}, {"Workspaces", lines(v.Workspaces)}, {"Network policy", preset},
		{"Network rules", fmt.Sprint(len(v.Network.Rules))}, {"Secrets", lines(v.Secrets)},
		{"Ports", lines(ports)}, {"Sessions", fmt.Sprint(v.Sessions)},
	} {
		fmt.Fprintf(tw, "%s\t%s\n", row[0], row[1])
	}
	return tw.Flush()
}

// dfEntry is one sandbox in `df --json` (shape assumed).
type dfEntry struct {
	Name      string `json:"name"`
	Status    string `json:"status"`
	SizeBytes int64  `json:"size_bytes"`
}

// df is `df [--json] [-v]` (sbx ≥ 0.55): the disk each sandbox's state takes.
func (c *cli) df(_ context.Context, args []string) error {
	f, err := parseFlags(c.flagsOf("df"), args, true)
	if err != nil {
		return err
	}
	if len(f.args) != 0 {
		return errors.New(`"sbx df" accepts no arguments`)
	}
	all, err := c.m.Store.List()
	if err != nil {
		return err
	}
	out := struct {
		Sandboxes  []dfEntry `json:"sandboxes"`
		TotalBytes int64     `json:"total_bytes"`
	}{Sandboxes: []dfEntry{}}
	for _, sb := range all {
		e := dfEntry{Name: sb.Name, Status: sb.Status(), SizeBytes: dirSize(c.m.Store.dir(sb.Name))}
		out.Sandboxes = append(out.Sandboxes, e)
		out.TotalBytes += e.SizeBytes
	}
	if f.has("json") {
		return c.printJSON(out)
	}
	tw := tabwriter.NewWriter(c.env.Stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "TYPE\tCOUNT\tSIZE")
	fmt.Fprintf(tw, "Sandboxes\t%d\t%s\n", len(out.Sandboxes), humanBytes(out.TotalBytes))
	if f.has("verbose") {
		fmt.Fprintln(tw, "\nSANDBOX\tSTATUS\tSIZE")
		for _, e := range out.Sandboxes {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Name, e.Status, humanBytes(e.SizeBytes))
		}
	}
	return tw.Flush()
}

// dirSize adds up the sizes of the regular files under dir (not following links, not
// descending into the mounted root of a running sandbox).
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && p == filepath.Join(dir, "root") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f%ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// roundTripJSON converts v to its JSON form's generic value.
func roundTripJSON(v any, out *any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// openSessions counts the exec sessions holding the sandbox's sessions file (each a
// shared flock, listed in /proc/locks by device and inode).
func (st Store) openSessions(name string) int {
	var s unix.Stat_t
	if unix.Stat(st.sessionsFile(name), &s) != nil {
		return 0
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0
	}
	id := fmt.Sprintf("%02x:%02x:%d", unix.Major(s.Dev), unix.Minor(s.Dev), s.Ino)
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		// "1: FLOCK  ADVISORY  READ  1234 08:01:5678 0 EOF"; a waiting lock has "->".
		if len(f) >= 6 && f[1] == "FLOCK" && f[3] == "READ" && f[5] == id {
			n++
		}
	}
	return n
}
