package sbx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
)

// Published is one mapping of `sbx ports`: host HostIP:HostPort forwards to the sandbox's
// SandboxPort.
type Published struct {
	HostIP      string `json:"host_ip"`
	HostPort    int    `json:"host_port"`
	SandboxPort int    `json:"sandbox_port"`
	Protocol    string `json:"protocol"`
	// URL is a cloud sandbox's public https URL for the port (`sbx --cloud ports`): anyone
	// who has it reaches the port, the Docker login does not protect it. "" locally.
	URL string `json:"url,omitempty"`
}

// UnmarshalJSON accepts snake_case (what sbxsim prints) and camelCase keys: sbx documents
// no schema for `ports --json`.
func (p *Published) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	get := func(dst any, keys ...string) error {
		for _, k := range keys {
			if v, ok := m[k]; ok {
				return json.Unmarshal(v, dst)
			}
		}
		return nil
	}
	return errors.Join(
		get(&p.HostIP, "host_ip", "hostIP", "hostIp", "HostIP"),
		get(&p.HostPort, "host_port", "hostPort", "HostPort"),
		get(&p.SandboxPort, "sandbox_port", "sandboxPort", "SandboxPort", "container_port", "containerPort"),
		get(&p.Protocol, "protocol", "Protocol", "proto"),
		get(&p.URL, "url", "URL", "public_url", "publicUrl"),
	)
}

// Spec renders the mapping as --unpublish wants it: HOST_IP:HOST_PORT:SANDBOX_PORT/PROTO.
func (p Published) Spec() string {
	ip := p.HostIP
	if strings.Contains(ip, ":") {
		ip = "[" + ip + "]"
	}
	return fmt.Sprintf("%s:%d:%d/%s", ip, p.HostPort, p.SandboxPort, p.Protocol)
}

// Loopback reports whether the host side is a loopback address.
func (p Published) Loopback() bool {
	ip, err := netip.ParseAddr(p.HostIP)
	return err == nil && ip.IsLoopback()
}

// portSpecRE is sbx's [[HOST_IP:]HOST_PORT:]SANDBOX_PORT[/PROTOCOL].
var portSpecRE = regexp.MustCompile(`^(?:(?:\[[0-9A-Fa-f:.]+\]|[0-9.]+):)?(?:[0-9]{1,5}:)?[0-9]{1,5}(?:/(?:tcp|tcp4|tcp6|udp|udp4|udp6))?$`)

// ValidPortSpec checks a --publish/--unpublish spec before it reaches argv.
func ValidPortSpec(spec string) error {
	if !portSpecRE.MatchString(spec) {
		return fmt.Errorf("invalid port spec %q: want [[HOST_IP:]HOST_PORT:]SANDBOX_PORT[/PROTOCOL]", spec)
	}
	return nil
}

// ListPorts returns the sandbox's published ports (`sbx ports NAME --json`). The output
// is capped and every entry validated; the human table is accepted too.
func (c *Client) ListPorts(ctx context.Context, name string) ([]Published, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	args := []string{"ports", name, "--json"}
	if c.portGroup(ctx) {
		args = []string{"port", "ls", name, "--json"}
	}
	res, err := c.run(ctx, call{op: args[0], sandbox: name, args: args, maxOut: 1 << 20})
	if err != nil {
		return nil, err
	}
	list, err := parsePorts(res.stdout)
	if err != nil {
		return nil, &Error{Op: "ports", Sandbox: name, Err: fmt.Errorf("%w: %v", ErrOutput, err)}
	}
	return list, nil
}

// Publish publishes one spec and returns the sandbox's mappings afterwards.
func (c *Client) Publish(ctx context.Context, name, spec string) ([]Published, error) {
	return c.changePorts(ctx, name, "--publish", spec)
}

// Unpublish removes one mapping (a Published.Spec, or SANDBOX_PORT for all of a port).
func (c *Client) Unpublish(ctx context.Context, name, spec string) error {
	_, err := c.changePorts(ctx, name, "--unpublish", spec)
	return err
}

func (c *Client) changePorts(ctx context.Context, name, flag, spec string) ([]Published, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	if err := ValidPortSpec(spec); err != nil {
		return nil, err
	}
	args := []string{"ports", name, flag, spec}
	if c.portGroup(ctx) {
		// --publish → port publish, --unpublish → port unpublish
		args = []string{"port", strings.TrimPrefix(flag, "--"), name, spec}
	}
	if _, err := c.run(ctx, call{op: args[0], sandbox: name, args: args, maxOut: 1 << 20}); err != nil {
		return nil, err
	}
	return c.ListPorts(ctx, name)
}

// portGroup reports whether sbx has the `port ls|publish|unpublish` group (v0.55), used
// where present: the manuals still show `ports`, but the reference documents `port`.
func (c *Client) portGroup(ctx context.Context) bool {
	v, err := c.Versions(ctx)
	if err != nil {
		return false
	}
	verb, _ := VerbNamed("port")
	return verb.At(v.Client)
}

// parsePorts reads `sbx ports --json` (an array, or {"ports": [...]}) or, failing that,
// the table HOST IP / HOST PORT / SANDBOX PORT / PROTOCOL.
func parsePorts(data []byte) ([]Published, error) {
	data = bytes.TrimSpace(data)
	var list []Published
	switch {
	case len(data) == 0 || string(data) == "null":
		return nil, nil
	case string(data) == "No published ports":
		// What real sbx (0.42.1) prints for a stopped sandbox, --json or not.
		return nil, nil
	case data[0] == '[':
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, err
		}
	case data[0] == '{':
		var obj struct {
			Ports []Published `json:"ports"`
		}
		if err := json.Unmarshal(data, &obj); err != nil {
			return nil, err
		}
		list = obj.Ports
	default:
		for _, line := range strings.Split(string(data), "\n") {
			f := strings.Fields(line)
			if len(f) != 4 || f[0] == "HOST" {
				continue
			}
			h, err1 := strconv.Atoi(f[1])
			s, err2 := strconv.Atoi(f[2])
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("unreadable ports row %q", line)
			}
			list = append(list, Published{HostIP: f[0], HostPort: h, SandboxPort: s, Protocol: f[3]})
		}
	}
	if len(list) > 4096 {
		return nil, fmt.Errorf("%d published ports", len(list))
	}
	for _, p := range list {
		if _, err := netip.ParseAddr(p.HostIP); err != nil || p.HostPort < 1 || p.HostPort > 65535 || p.SandboxPort < 1 || p.SandboxPort > 65535 {
			return nil, fmt.Errorf("invalid mapping %+v", p)
		}
		switch p.Protocol {
		case "tcp", "tcp4", "tcp6", "udp", "udp4", "udp6":
		default:
			return nil, fmt.Errorf("invalid protocol in %+v", p)
		}
	}
	return list, nil
}
