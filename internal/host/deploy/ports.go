package deploy

import (
	"context"
	"fmt"
	neturl "net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// portSpec is a docker_run port: container port C, optional host port H, protocol.
type portSpec struct {
	host, container int // host 0: ephemeral
	proto           string
}

var portRE = regexp.MustCompile(`^(?:([0-9]{1,5}):)?([0-9]{1,5})(?:/(tcp|udp))?$`)

func parsePort(s string) (portSpec, error) {
	m := portRE.FindStringSubmatch(s)
	if m == nil {
		return portSpec{}, refuse("port %q: want \"C\" or \"H:C\", optionally with /tcp or /udp", s)
	}
	p := portSpec{proto: "tcp"}
	if m[3] != "" {
		p.proto = m[3]
	}
	var err error
	if p.container, err = portNumber(m[2]); err != nil {
		return p, refuse("port %q: %v", s, err)
	}
	if m[1] != "" {
		if p.host, err = portNumber(m[1]); err != nil {
			return p, refuse("port %q: %v", s, err)
		}
	}
	return p, nil
}

func portNumber(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("%s is not a port (1-65535)", s)
	}
	return n, nil
}

func (p portSpec) String() string {
	s := strconv.Itoa(p.container) + "/" + p.proto
	if p.host != 0 {
		s = strconv.Itoa(p.host) + ":" + s
	}
	return s
}

// dockerPublish is the container's -p: with a host port H the sandbox port is H too
// (sbx then forwards host H to sandbox H); without one docker picks a free sandbox port.
func (p portSpec) dockerPublish() string {
	if p.host != 0 {
		return fmt.Sprintf("%d:%d/%s", p.host, p.container, p.proto)
	}
	return fmt.Sprintf("%d/%s", p.container, p.proto)
}

// sbxProto is the protocol sbx is asked for: the default (tcp4, 127.0.0.1) for tcp.
func sbxProto(proto string) string {
	if proto == "udp" {
		return "/udp"
	}
	return ""
}

func sameFamily(sbxProto, proto string) bool { return strings.HasPrefix(sbxProto, proto) }

// publish forwards host 127.0.0.1:H (or an ephemeral port) to sandbox port sandboxPort
// and returns the mapping sbx made. When the wanted host port cannot be had it falls back
// to an ephemeral one and says so in note.
func (d *Deployer) publish(ctx context.Context, name string, host, sandboxPort int, proto string) (m sbx.Published, note string, err error) {
	want := strconv.Itoa(sandboxPort) + sbxProto(proto)
	if host != 0 {
		spec := strconv.Itoa(host) + ":" + want
		list, perr := d.Sbx.Publish(ctx, name, spec)
		if perr == nil {
			if m, ok := findMapping(list, host, sandboxPort, proto); ok {
				return m, "", nil
			}
		}
		note = fmt.Sprintf("host port %d was not available (%v); published on a free port instead", host, perr)
	}
	list, err := d.Sbx.Publish(ctx, name, want)
	if err != nil {
		return sbx.Published{}, note, fmt.Errorf("publishing sandbox port %d: %w", sandboxPort, err)
	}
	if m, ok := findMapping(list, 0, sandboxPort, proto); ok {
		return m, note, nil
	}
	return sbx.Published{}, note, fmt.Errorf("sbx ports does not list sandbox port %d after publishing it", sandboxPort)
}

// findMapping finds the loopback mapping to sandboxPort (of host port host, when given).
func findMapping(list []sbx.Published, host, sandboxPort int, proto string) (sbx.Published, bool) {
	for i := len(list) - 1; i >= 0; i-- {
		m := list[i]
		if m.SandboxPort == sandboxPort && sameFamily(m.Protocol, proto) && m.Loopback() && (host == 0 || m.HostPort == host) {
			return m, true
		}
	}
	return sbx.Published{}, false
}

// unpublishSandboxPorts removes every sbx mapping to the given sandbox ports, which
// running containers bind now.
func (d *Deployer) unpublishSandboxPorts(ctx context.Context, name string, ports map[int]string) ([]sbx.Published, error) {
	if len(ports) == 0 {
		return nil, nil
	}
	return d.unpublishWhere(ctx, name, func(m sbx.Published) bool {
		proto, ok := ports[m.SandboxPort]
		return ok && sameFamily(m.Protocol, proto)
	})
}

// unpublishWhere removes the sbx mappings (asking sbx which exist, not trusting memory)
// that mine selects, and returns what it removed.
func (d *Deployer) unpublishWhere(ctx context.Context, name string, mine func(sbx.Published) bool) ([]sbx.Published, error) {
	list, err := d.Sbx.ListPorts(ctx, name)
	if err != nil {
		return nil, err
	}
	var done []sbx.Published
	var errs []string
	for _, m := range list {
		if !mine(m) {
			continue
		}
		if err := d.Sbx.Unpublish(ctx, name, m.Spec()); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		done = append(done, m)
	}
	if len(errs) > 0 {
		return done, fmt.Errorf("unpublishing: %s", strings.Join(errs, "; "))
	}
	return done, nil
}

// url names a mapping for people and for docker_curl.
//
// A cloud sandbox's port is its public https URL, said to be public: the Docker login
// does not protect it, and whoever has the URL reaches the port.
func url(m sbx.Published) string {
	if publicURL(m.URL) {
		return m.URL + " (PUBLIC: anyone with this URL reaches the port; the Docker login does not protect it)"
	}
	host := m.HostIP
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if strings.HasPrefix(m.Protocol, "udp") {
		return fmt.Sprintf("udp://%s:%d", host, m.HostPort)
	}
	return fmt.Sprintf("http://%s:%d/", host, m.HostPort)
}

func describeUnpublished(ms []sbx.Published) string {
	if len(ms) == 0 {
		return ""
	}
	var s []string
	for _, m := range ms {
		s = append(s, fmt.Sprintf("%s:%d", m.HostIP, m.HostPort))
	}
	sort.Strings(s)
	return "Unpublished host ports: " + strings.Join(s, ", ") + "."
}

// publicURL reports whether u is one sbx --cloud gives for a published port: an https
// URL with a host and nothing that could garble a line (sbx prints it; it is checked
// all the same before it is shown).
func publicURL(u string) bool {
	if !strings.HasPrefix(u, "https://") || len(u) > 512 || strings.ContainsAny(u, " \t\r\n\x00\x1b") {
		return false
	}
	p, err := neturl.Parse(u)
	return err == nil && p.Host != "" && p.User == nil
}
