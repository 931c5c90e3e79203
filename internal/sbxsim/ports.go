//go:build linux

package sbxsim

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Port is one published port: host HostIP:HostPort forwarded to the sandbox's
// SandboxPort by a proxy process.
type Port struct {
	HostIP      string `json:"host_ip"`
	HostPort    int    `json:"host_port"`
	SandboxPort int    `json:"sandbox_port"`
	Protocol    string `json:"protocol"`
	// Ephemeral marks a host port sbxsim chose; it is chosen again after a restart.
	Ephemeral bool  `json:"ephemeral,omitempty"`
	Proxy     *Proc `json:"proxy,omitempty"`
	// URL is a cloud sandbox's public URL for the port (its proxy is a TLS front).
	URL string `json:"url,omitempty"`
}

// String renders the mapping as sbx ls does: 127.0.0.1:8080->3000/tcp4.
func (p Port) String() string {
	return fmt.Sprintf("%s->%d/%s", net.JoinHostPort(p.HostIP, strconv.Itoa(p.HostPort)), p.SandboxPort, p.Protocol)
}

// parsePortSpec parses --publish's [[HOST_IP:]HOST_PORT:]SANDBOX_PORT[/PROTOCOL]. The host
// IP defaults to 127.0.0.1 and the protocol to tcp4 (sbx ≥ 0.42); an IPv6 host IP is
// written in brackets and defaults to tcp6. A missing host port is ephemeral.
func parsePortSpec(spec string) (Port, error) {
	bad := func(why string) (Port, error) {
		return Port{}, fmt.Errorf("invalid port spec %q: %s", spec, why)
	}
	s, proto, hasProto := strings.Cut(spec, "/")
	var ip string
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]:")
		if end < 0 {
			return bad("unterminated IPv6 address")
		}
		ip, s = s[1:end], s[end+2:]
	}
	parts := strings.Split(s, ":")
	if ip == "" && len(parts) == 3 {
		ip, parts = parts[0], parts[1:]
	}
	p := Port{HostIP: ip, Ephemeral: true}
	switch len(parts) {
	case 1:
	case 2:
		h, err := portNumber(parts[0])
		if err != nil {
			return bad(err.Error())
		}
		p.HostPort, p.Ephemeral = h, false
		parts = parts[1:]
	default:
		return bad("too many fields")
	}
	c, err := portNumber(parts[0])
	if err != nil || c == 0 {
		return bad("sandbox port must be between 1 and 65535")
	}
	p.SandboxPort = c
	if p.HostIP != "" {
		a := net.ParseIP(p.HostIP)
		if a == nil {
			return bad("invalid host IP")
		}
		if !hasProto {
			proto = "tcp4"
			if a.To4() == nil {
				proto = "tcp6"
			}
		}
	}
	if !hasProto && proto == "" {
		proto = "tcp4"
	}
	switch proto {
	case "tcp", "tcp4", "tcp6":
	case "udp", "udp4", "udp6":
		return bad("sbxsim forwards TCP only")
	default:
		return bad("unknown protocol " + proto)
	}
	p.Protocol = proto
	if p.HostIP == "" {
		p.HostIP = "127.0.0.1"
		if proto == "tcp6" {
			p.HostIP = "::1"
		}
	}
	return p, nil
}

func portNumber(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 65535 {
		return 0, fmt.Errorf("port %q must be a number between 0 and 65535", s)
	}
	return n, nil
}

// matchesUnpublish reports whether p is selected by an --unpublish spec: either a bare
// SANDBOX_PORT (every mapping to it) or [HOST_IP:]HOST_PORT:SANDBOX_PORT[/PROTOCOL].
func matchesUnpublish(p Port, spec string) (bool, error) {
	if n, err := strconv.Atoi(spec); err == nil {
		return p.SandboxPort == n, nil
	}
	q, err := parsePortSpec(spec)
	if err != nil {
		return false, err
	}
	hasProto := strings.Contains(spec, "/")
	hasIP := strings.Count(strings.SplitN(spec, "/", 2)[0], ":") >= 2 || strings.HasPrefix(spec, "[")
	return p.SandboxPort == q.SandboxPort && p.HostPort == q.HostPort &&
		(!hasIP || p.HostIP == q.HostIP) && (!hasProto || p.Protocol == q.Protocol), nil
}

// publish binds the host end of p and starts its proxy inside the sandbox's network
// namespace, so that the proxy reaches the sandbox port from within (the veth lets no
// connection in). p.HostPort is filled in when ephemeral.
func (m *Manager) publish(ctx context.Context, sb *Sandbox, p *Port) error {
	network := "tcp4"
	if p.Protocol == "tcp6" || net.ParseIP(p.HostIP).To4() == nil {
		network = "tcp6"
	}
	host := 0
	if !p.Ephemeral {
		host = p.HostPort
	}
	ln, err := net.Listen(network, net.JoinHostPort(p.HostIP, strconv.Itoa(host)))
	if err != nil {
		return fmt.Errorf("start runtime: request failed: 409 Conflict: port is already allocated: %w", err)
	}
	p.HostPort = ln.Addr().(*net.TCPAddr).Port
	lf, err := ln.(*net.TCPListener).File() // a dup for the proxy
	ln.Close()
	if err != nil {
		return err
	}
	defer lf.Close()
	nsenter, err := lookTool("nsenter")
	if err != nil {
		return err
	}
	target := net.JoinHostPort(sb.Net.SandboxIP, strconv.Itoa(p.SandboxPort))
	mode := []string{"__proxy", target}
	if sb.Cloud != nil {
		if mode, err = m.cloudProxyArgs(sb, p, target); err != nil {
			return err
		}
	}
	cmd := exec.CommandContext(ctx, nsenter, append([]string{"--target", strconv.Itoa(sb.Init.Pid), "--net", "--", m.Self}, mode...)...)
	cmd.Env = []string{"PATH=" + defaultPath}
	cmd.ExtraFiles = []*os.File{lf}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting proxy for %s: %w", p, err)
	}
	// nsenter without --pid does not fork: the pid becomes the proxy's.
	proc, err := procOf(cmd.Process.Pid)
	if err != nil {
		return fmt.Errorf("starting proxy for %s: %w", p, err)
	}
	_ = cmd.Process.Release()
	p.Proxy = proc
	return nil
}

// publishSaved restarts the proxies of a sandbox's recorded ports after a start.
func (m *Manager) publishSaved(ctx context.Context, sb *Sandbox) error {
	for i := range sb.Ports {
		if err := m.publish(ctx, sb, &sb.Ports[i]); err != nil {
			return err
		}
	}
	return nil
}

// unpublish stops the proxies of every port selected by spec and forgets them.
func (m *Manager) unpublish(ctx context.Context, sb *Sandbox, spec string) error {
	var keep []Port
	found := false
	for _, p := range sb.Ports {
		ok, err := matchesUnpublish(p, spec)
		if err != nil {
			return err
		}
		if !ok {
			keep = append(keep, p)
			continue
		}
		found = true
		if p.Proxy != nil {
			if err := p.Proxy.Terminate(ctx, time.Second); err != nil {
				return err
			}
		}
	}
	if !found {
		return fmt.Errorf("no published port matches %q", spec)
	}
	sb.Ports = keep
	return nil
}
