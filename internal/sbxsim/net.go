//go:build linux

package sbxsim

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/netip"
	"strconv"
	"strings"
)

// NetSlot is a sandbox's share of the private range 10.213.0.0/16: a /30 holding the
// host end of its veth pair (.1) and the sandbox end, eth0 (.2).
type NetSlot struct {
	Slot      int    `json:"slot"`
	Veth      string `json:"veth"`
	HostIP    string `json:"hostIP"`
	SandboxIP string `json:"sandboxIP"`
}

const (
	netSlots   = 1 << 14 // /30s in a /16
	vethPrefix = "sbxsim"
)

var netBase = netip.MustParseAddr("10.213.0.0")

// slotAddrs returns the host and sandbox addresses of a slot.
func slotAddrs(slot int) (host, sandbox netip.Addr) {
	b := netBase.As4()
	off := slot * 4
	b[2] += byte(off >> 8)
	b[3] += byte(off & 0xff)
	base := netip.AddrFrom4(b)
	return base.Next(), base.Next().Next()
}

// inboundRules drop new connections that come into the sandbox from the host over the
// veth: the only way in is a published port, whose proxy connects from inside.
const inboundRules = `*raw
-A PREROUTING -i eth0 -p tcp --syn -j DROP
-A PREROUTING -i eth0 -p udp -j DROP
-A PREROUTING -i eth0 -p icmp --icmp-type echo-request -j DROP
COMMIT
`

// setupNet creates the veth pair of the sandbox whose init is pid. The slot is claimed
// by creating the host end, whose name encodes it: the kernel refuses a duplicate name,
// so concurrent sbxsim processes (even with different state directories) never share a
// slot. The search starts at a hash of the name to keep it short.
func setupNet(ctx context.Context, name string, pid int) (*NetSlot, error) {
	h := fnv.New32a()
	h.Write([]byte(name))
	start := int(h.Sum32() % netSlots)
	for i := 0; i < netSlots; i++ {
		slot := (start + i) % netSlots
		veth := vethPrefix + strconv.Itoa(slot)
		_, err := runTool(ctx, nil, "ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", strconv.Itoa(pid))
		if err != nil && strings.Contains(err.Error(), "File exists") {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("creating veth for %s: %w", name, err)
		}
		host, sb := slotAddrs(slot)
		ns := &NetSlot{Slot: slot, Veth: veth, HostIP: host.String(), SandboxIP: sb.String()}
		if err := configureNet(ctx, ns, pid); err != nil {
			deleteVeth(ctx, veth)
			return nil, fmt.Errorf("configuring network of %s: %w", name, err)
		}
		return ns, nil
	}
	return nil, fmt.Errorf("creating veth for %s: no free address in %s/16", name, netBase)
}

func configureNet(ctx context.Context, ns *NetSlot, pid int) error {
	if _, err := runTool(ctx, nil, "ip", "addr", "add", ns.HostIP+"/30", "dev", ns.Veth); err != nil {
		return err
	}
	if _, err := runTool(ctx, nil, "ip", "link", "set", ns.Veth, "up"); err != nil {
		return err
	}
	inside := fmt.Sprintf("link set lo up\naddr add %s/30 dev eth0\nlink set eth0 up\nroute add default via %s\n", ns.SandboxIP, ns.HostIP)
	t := strconv.Itoa(pid)
	if _, err := runTool(ctx, strings.NewReader(inside), "nsenter", "--target", t, "--net", "ip", "-batch", "-"); err != nil {
		return err
	}
	if _, err := runTool(ctx, strings.NewReader(inboundRules+egressRules(ns.HostIP)), "nsenter", "--target", t, "--net", "iptables-restore", "--noflush"); err != nil {
		return err
	}
	return nil
}

// deleteVeth removes the host end of a veth pair (which removes its peer); a pair that
// is already gone (its namespace died) is not an error.
func deleteVeth(ctx context.Context, veth string) {
	_, _ = runTool(ctx, nil, "ip", "link", "del", veth)
}

// vethExists reports whether the host end of a veth pair still exists.
func vethExists(ctx context.Context, veth string) bool {
	_, err := runTool(ctx, nil, "ip", "link", "show", "dev", veth)
	return err == nil
}
