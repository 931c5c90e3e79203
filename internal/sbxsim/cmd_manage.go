//go:build linux

package sbxsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"
)

// lsEntry is one sandbox in `ls --json`.
type lsEntry struct {
	Name       string   `json:"name"`
	Status     string   `json:"status"`
	Agent      string   `json:"agent"`
	Workspaces []string `json:"workspaces"`
	Ports      []Port   `json:"ports"`
}

func (c *cli) ls(_ context.Context, args []string) error {
	fs, err := parseFlags(c.flagsOf("ls"), args, true)
	if err != nil {
		return err
	}
	all, err := c.m.Store.List()
	if err != nil {
		return err
	}
	switch {
	case fs.has("json"):
		out := struct {
			Sandboxes []lsEntry `json:"sandboxes"`
		}{Sandboxes: []lsEntry{}}
		for _, sb := range all {
			e := lsEntry{Name: sb.Name, Status: sb.Status(), Agent: sb.Agent, Workspaces: wsStrings(sb.Workspaces), Ports: publicPorts(sb)}
			if e.Workspaces == nil {
				e.Workspaces = []string{}
			}
			out.Sandboxes = append(out.Sandboxes, e)
		}
		enc := json.NewEncoder(c.env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case fs.has("quiet"):
		for _, sb := range all {
			fmt.Fprintln(c.env.Stdout, sb.Name)
		}
		return nil
	}
	tw := tabwriter.NewWriter(c.env.Stdout, 0, 8, 2, ' ', 0)
	withPorts := c.atLeast(V055) // ls text gained a PORTS column in 0.55
	if withPorts {
		fmt.Fprintln(tw, "SANDBOX\tAGENT\tSTATUS\tPORTS\tWORKSPACE")
	} else {
		fmt.Fprintln(tw, "SANDBOX\tAGENT\tSTATUS\tWORKSPACE")
	}
	for _, sb := range all {
		var ports []string
		for _, p := range publicPorts(sb) {
			ports = append(ports, p.String())
		}
		if withPorts {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", sb.Name, sb.Agent, sb.Status(), lines(ports), lines(wsStrings(sb.Workspaces)))
		} else {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", sb.Name, sb.Agent, sb.Status(), lines(wsStrings(sb.Workspaces)))
		}
	}
	return tw.Flush()
}

// publicPorts are the sandbox's published ports as sbx reports them: only while running
// (a stopped sandbox publishes nothing) and without sbxsim's bookkeeping.
func publicPorts(sb *Sandbox) []Port {
	out := []Port{}
	if !sb.Running() {
		return out
	}
	for _, p := range sb.Ports {
		p.Proxy, p.Ephemeral = nil, false
		out = append(out, p)
	}
	return out
}

func (c *cli) stop(ctx context.Context, args []string) error {
	fs, err := parseFlags(c.flagsOf("stop"), args, true)
	if err != nil {
		return err
	}
	if err := argCount("stop", fs.args, 1); err != nil {
		return err
	}
	return c.forEachName(fs.args, func(name string) error {
		if err := c.stopOne(ctx, name); err != nil {
			return err
		}
		c.m.Store.waitSessionsEnded(name, 5*time.Second)
		return nil
	})
}

// stopOne stops a sandbox under its lock.
func (c *cli) stopOne(ctx context.Context, name string) error {
	l, err := c.m.Store.Lock(ctx, name)
	if err != nil {
		return notFound(err)
	}
	defer l.Unlock()
	sb, err := c.m.Store.Load(name)
	if err != nil {
		return notFound(err)
	}
	return c.m.stop(ctx, sb)
}

func (c *cli) rm(ctx context.Context, args []string) error {
	fs, err := parseFlags(c.flagsOf("rm"), args, true)
	if err != nil {
		return err
	}
	names := fs.args
	if fs.has("all") {
		if len(names) > 0 {
			return errors.New("--all takes no sandbox names")
		}
		all, err := c.m.Store.List()
		if err != nil {
			return err
		}
		for _, sb := range all {
			names = append(names, sb.Name)
		}
		if len(names) == 0 {
			return nil
		}
	} else if err := argCount("rm", names, 1); err != nil {
		return err
	}
	switch {
	case fs.has("force"):
	case c.interactive():
		fmt.Fprintf(c.env.Stderr, "Remove %d sandbox(es)? This action cannot be undone. [y/N] ", len(names))
		var answer string
		_, _ = fmt.Fscanln(c.env.Stdin, &answer)
		if answer != "y" && answer != "Y" && answer != "yes" {
			return errors.New("declined")
		}
	case c.noInput:
		return fmt.Errorf("removing needs confirmation: run 'sbx rm --force %s'", strings.Join(names, " "))
	case c.atLeast(V055):
		// No terminal to ask on: sbx 0.55 refuses, as its secret rm does (DS).
		return errors.New("stdin is not a terminal; use --force to remove without confirmation")
	}
	return c.forEachName(names, func(name string) error {
		if !fs.has("force") {
			// Clone mode: rm warns about commits the host has not fetched; without a
			// terminal to confirm, it refuses (docs/sbxsim.md, inferred).
			if sb, err := c.m.Store.Load(name); err == nil && sb.Clone != nil {
				if unsaved := unsavedBranches(sb); len(unsaved) > 0 {
					return fmt.Errorf("sandbox '%s' has unsaved commits on %s (git fetch %s saves them); use --force to remove it anyway",
						name, strings.Join(unsaved, ", "), remote(name))
				}
			}
		}
		return c.m.remove(ctx, name)
	})
}

// run starts an existing sandbox without a session (`run --name N -d`), or creates and
// starts one. sbxsim has no agent sessions to attach to, so -d is required.
func (c *cli) run(ctx context.Context, args []string) error {
	fs, err := parseFlags(c.flagsOf("run"), args, true)
	if err != nil {
		return err
	}
	if !fs.has("detach") {
		return errors.New("sbxsim cannot open an agent session: use `run -d` and then `exec`")
	}
	name := fs.last("name")
	if name != "" {
		if _, err := c.m.Store.Load(name); err == nil {
			for _, f := range []string{"template", "memory", "cpus"} {
				if fs.has(f) {
					return fmt.Errorf("--%s can only be used when creating a sandbox; %q already exists", f, name)
				}
			}
			sb, err := c.m.ensureRunning(ctx, name)
			if err != nil {
				return err
			}
			if err := c.m.armAutoStop(ctx, sb); err != nil {
				fmt.Fprintf(c.env.Stderr, "WARN: %v\n", err)
			}
			fmt.Fprintln(c.env.Stdout, sb.Name)
			return nil
		}
	}
	if err := argCount("run", fs.args, 1); err != nil {
		if name != "" {
			return errNoSandbox{name}
		}
		return err
	}
	paths := fs.args[1:]
	if len(paths) == 0 {
		paths = []string{c.env.Cwd} // run, unlike create, mounts the current directory
	}
	o, err := c.createOptions(fs, fs.args[0], paths)
	if err != nil {
		return err
	}
	sb, err := c.createSandbox(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprintln(c.env.Stdout, sb.Name)
	return nil
}
