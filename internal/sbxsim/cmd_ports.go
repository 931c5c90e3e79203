//go:build linux

package sbxsim

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
)

// portsArgs parses `ports NAME [--publish SPEC]...`: the flags, the sandbox's name and
// the ports to publish.
func (c *cli) portsArgs(args []string) (fs flagSet, name string, specs []Port, err error) {
	fs, err = parseFlags(c.flagsOf("ports"), args, true)
	if err != nil {
		return flagSet{}, "", nil, err
	}
	if len(fs.args) != 1 {
		return flagSet{}, "", nil, fmt.Errorf("\"sbx ports\" requires exactly 1 argument")
	}
	for _, s := range fs.values["publish"] {
		p, err := parsePortSpec(s)
		if err != nil {
			return flagSet{}, "", nil, err
		}
		specs = append(specs, p)
	}
	return fs, fs.args[0], specs, nil
}

func (c *cli) ports(ctx context.Context, args []string) error {
	fs, name, specs, err := c.portsArgs(args)
	if err != nil {
		return err
	}
	sb, err := c.m.Store.Load(name)
	if err != nil {
		return notFound(err)
	}
	if len(specs) > 0 || fs.has("unpublish") {
		if sb, err = c.changePorts(ctx, name, specs, fs.values["unpublish"]); err != nil {
			return notFound(err)
		}
		if len(specs) > 0 { // publishing started it, with no session to keep it running
			if err := c.m.armAutoStop(ctx, sb); err != nil {
				fmt.Fprintf(c.env.Stderr, "WARN: %v\n", err)
			}
		}
	}
	if !sb.Running() {
		// Real sbx (0.42.1) answers a stopped sandbox with text, --json or not.
		fmt.Fprintln(c.env.Stdout, "No published ports")
		return nil
	}
	ports := publicPorts(sb)
	if fs.has("json") {
		enc := json.NewEncoder(c.env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(ports)
	}
	tw := tabwriter.NewWriter(c.env.Stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST IP\tHOST PORT\tSANDBOX PORT\tPROTOCOL")
	for _, p := range ports {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", p.HostIP, p.HostPort, p.SandboxPort, p.Protocol)
	}
	return tw.Flush()
}

// changePorts unpublishes, then publishes (starting a stopped sandbox first), under the
// sandbox's lock, and records the result.
func (c *cli) changePorts(ctx context.Context, name string, publish []Port, unpublish []string) (*Sandbox, error) {
	if len(publish) > 0 {
		if _, err := c.m.ensureRunning(ctx, name); err != nil {
			return nil, err
		}
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
	for _, u := range unpublish {
		if err := c.m.unpublish(ctx, sb, u); err != nil {
			return nil, err
		}
	}
	var saveErr error
	for _, p := range publish {
		if !sb.Running() {
			saveErr = fmt.Errorf("sandbox %s stopped while publishing", name)
			break
		}
		if err := c.m.publish(ctx, sb, &p); err != nil {
			saveErr = err
			break
		}
		sb.Ports = append(sb.Ports, p)
	}
	if err := c.m.Store.Save(sb); err != nil {
		return nil, err
	}
	return sb, saveErr
}
