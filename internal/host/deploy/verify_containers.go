package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// daemonSockets are where the sandbox's daemon listens: a container that mounts one (or
// a directory above it) commands the daemon, and through it the whole sandbox.
var daemonSockets = []string{"/var/run/docker.sock", "/run/docker.sock"}

// inspected is what the containers check reads of `docker inspect`.
type inspected struct {
	Name       string
	HostConfig struct {
		Privileged                            bool
		CapAdd, SecurityOpt                   []string
		Devices                               []json.RawMessage
		PidMode, IpcMode, UTSMode, UsernsMode string
	}
	Mounts []struct {
		Type, Name, Source, Destination string
		RW                              bool
	}
}

// checkContainers looks at every running container in the sandbox: none may hold the
// daemon's socket, write the host-mounted workspace in read-only mode, or run with
// raised privileges (privileged, added capabilities, seccomp/AppArmor off, devices, the
// sandbox's namespaces) — whoever started it, the docker tools, bash or compose.
func (d *Deployer) checkContainers(ctx context.Context, name string) Check {
	const n = "containers"
	o, err := d.execIn(ctx, d.Sbx, name, ShortTimeout, nil, nil, append(d.dockerPrefix(), "ps", "--quiet", "--no-trunc")...)
	if err != nil || o.code != 0 {
		return fail(n, "docker ps failed: %v %s", err, o.text())
	}
	ids := strings.Fields(o.stdout)
	if len(ids) == 0 {
		return pass(n, "no running containers")
	}
	o, err = d.execIn(ctx, d.Sbx, name, ShortTimeout, nil, nil, append(append(d.dockerPrefix(), "inspect", "--type=container"), ids...)...)
	if err != nil || o.code != 0 {
		return fail(n, "docker inspect failed: %v %s", err, o.text())
	}
	var cs []inspected
	if err := json.Unmarshal([]byte(o.stdout), &cs); err != nil {
		return fail(n, "docker inspect: %v", err)
	}
	devices, err := d.volumeDevices(ctx, name, cs)
	if err != nil {
		return fail(n, "docker volume inspect: %v", err)
	}
	var bad, names []string
	for _, c := range cs {
		cname := strings.TrimPrefix(c.Name, "/")
		names = append(names, cname)
		if why := d.containerFindings(c, devices); len(why) > 0 {
			bad = append(bad, cname+": "+strings.Join(why, ", "))
		}
	}
	sort.Strings(names)
	if len(bad) > 0 {
		return fail(n, "%s", strings.Join(bad, "\n"))
	}
	ro := ""
	if d.ReadOnly {
		ro = ", writes the read-only workspace"
	}
	return pass(n, "%d running (%s): none holds the daemon's socket%s or runs with raised privileges", len(cs), strings.Join(names, " "), ro)
}

// containerFindings says what is wrong with one container.
func (d *Deployer) containerFindings(c inspected, devices map[string]string) []string {
	var why []string
	h := c.HostConfig
	if h.Privileged {
		why = append(why, "privileged")
	}
	if len(h.CapAdd) > 0 {
		why = append(why, "cap_add "+strings.Join(h.CapAdd, " "))
	}
	for _, o := range h.SecurityOpt {
		if strings.Contains(o, "unconfined") {
			why = append(why, "security_opt "+o)
		}
	}
	if len(h.Devices) > 0 {
		why = append(why, fmt.Sprintf("%d device(s)", len(h.Devices)))
	}
	for k, v := range map[string]string{"pid": h.PidMode, "ipc": h.IpcMode, "uts": h.UTSMode, "userns": h.UsernsMode} {
		if v == "host" {
			why = append(why, k+" namespace of the sandbox")
		}
	}
	for _, m := range c.Mounts {
		src := m.Source
		if m.Type == "volume" && devices[m.Name] != "" {
			src = devices[m.Name] // a volume that binds a path
		}
		for _, s := range daemonSockets {
			if within(src, s) {
				why = append(why, fmt.Sprintf("mounts %s at %s: the daemon's socket", src, m.Destination))
			}
		}
		if d.ReadOnly && m.RW && (m.Type == "bind" || devices[m.Name] != "") && (within(d.Workspace, src) || within(src, d.Workspace)) {
			why = append(why, fmt.Sprintf("mounts the read-only workspace writable (%s at %s)", d.rel(src), m.Destination))
		}
	}
	sort.Strings(why)
	return why
}

// volumeDevices maps the containers' named volumes to the path each binds, if any
// (driver_opts device with o=bind).
func (d *Deployer) volumeDevices(ctx context.Context, name string, cs []inspected) (map[string]string, error) {
	seen := map[string]bool{}
	var vols []string
	for _, c := range cs {
		for _, m := range c.Mounts {
			if m.Type == "volume" && m.Name != "" && !seen[m.Name] {
				seen[m.Name] = true
				vols = append(vols, m.Name)
			}
		}
	}
	out := map[string]string{}
	if len(vols) == 0 {
		return out, nil
	}
	o, err := d.execIn(ctx, d.Sbx, name, ShortTimeout, nil, nil, append(append(d.dockerPrefix(), "volume", "inspect"), vols...)...)
	if err != nil {
		return nil, err
	}
	if o.code != 0 {
		return nil, o.err("docker volume inspect")
	}
	var vs []struct {
		Name    string
		Options map[string]string
	}
	if err := json.Unmarshal([]byte(o.stdout), &vs); err != nil {
		return nil, err
	}
	for _, v := range vs {
		if dev := v.Options["device"]; strings.HasPrefix(dev, "/") && strings.Contains(","+v.Options["o"]+",", ",bind,") {
			out[v.Name] = dev
		}
	}
	return out, nil
}
