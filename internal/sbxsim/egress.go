//go:build linux

package sbxsim

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The egress proxy: sbx sends every byte a sandbox sends out through a host proxy that
// applies the network policy. sbxsim's is one host-side process per running sandbox
// (the hidden __egress mode) whose listening socket lives in the sandbox's network
// namespace on egressPort; iptables there redirects every TCP connection that would
// leave by eth0 (and every one its containers make outside their bridges) to it. The
// proxy reads the original destination (SO_ORIGINAL_DST, the sandbox's conntrack, since
// the socket is the sandbox's), asks the policy, logs the decision, and dials allowed
// connections from the host's namespace. A connection made to the listener itself is
// the proxy used explicitly (HTTP CONNECT or an absolute-form request).

// egressPort is the proxy's port inside each sandbox.
const egressPort = 3128

// resolveBase is the first private address (198.18.0.0/15, set aside for tests) that
// SBXSIM_RESOLVE's names resolve to inside a sandbox.
var resolveBase = netip.MustParseAddr("198.18.0.1")

// Resolve is one test host: Name resolves to Addr inside the sandbox, and the proxy
// delivers connections to it at Target on the host.
type Resolve struct {
	Name   string `json:"name"`
	Target string `json:"target"`
	Addr   string `json:"addr"`
}

// parseResolve parses SBXSIM_RESOLVE: name=IP:PORT[,name=IP:PORT…].
func parseResolve(v string) ([]Resolve, error) {
	var out []Resolve
	addr := resolveBase
	seen := map[string]bool{}
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, target, ok := strings.Cut(item, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if !ok || !validHostname(name) || seen[name] {
			return nil, fmt.Errorf("SBXSIM_RESOLVE: %q is not NAME=IP:PORT with a new host name", item)
		}
		h, p, err := net.SplitHostPort(strings.TrimSpace(target))
		if _, perr := strconv.Atoi(p); err != nil || perr != nil || net.ParseIP(h) == nil {
			return nil, fmt.Errorf("SBXSIM_RESOLVE: %q: the target must be IP:PORT", item)
		}
		seen[name] = true
		out = append(out, Resolve{Name: name, Target: net.JoinHostPort(h, p), Addr: addr.String()})
		addr = addr.Next()
	}
	return out, nil
}

// egressRules are the sandbox's iptables rules (after inboundRules): TCP leaving by eth0
// (but to the veth's host end, reachable as before) and TCP its containers send outside
// the sandbox go to the proxy; UDP (DNS included) and ICMP out are rejected, as sbx
// blocks them by default.
func egressRules(hostIP string) string {
	port := strconv.Itoa(egressPort)
	return `*nat
:sbxsim-egress - [0:0]
-A OUTPUT -o eth0 -p tcp -d ` + hostIP + ` -j RETURN
-A OUTPUT -o eth0 -p tcp -j REDIRECT --to-ports ` + port + `
-A PREROUTING -p tcp ! -i eth0 -j sbxsim-egress
-A sbxsim-egress -m addrtype --dst-type LOCAL -j RETURN
-A sbxsim-egress -d 172.16.0.0/12 -j RETURN
-A sbxsim-egress -d 192.168.0.0/16 -j RETURN
-A sbxsim-egress -d ` + hostIP + ` -j RETURN
-A sbxsim-egress -p tcp -j REDIRECT --to-ports ` + port + `
COMMIT
*filter
-A OUTPUT -o eth0 -p udp -j REJECT
-A OUTPUT -o eth0 -p icmp -j REJECT
-A FORWARD -o eth0 -p udp -j REJECT
-A FORWARD -o eth0 -p icmp -j REJECT
COMMIT
`
}

// listenIn opens the proxy's listening socket in the network namespace of pid: this
// thread joins it for the socket call only.
func listenIn(pid int) (*os.File, error) {
	runtime.LockOSThread()
	self, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	defer self.Close()
	target, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("joining the sandbox's network: %w", err)
	}
	ln, lerr := net.Listen("tcp4", "0.0.0.0:"+strconv.Itoa(egressPort))
	if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
		// The thread stays in the sandbox's namespace: leave it locked, so that it
		// ends with this goroutine instead of running anything else.
		if ln != nil {
			ln.Close()
		}
		return nil, fmt.Errorf("leaving the sandbox's network: %w", err)
	}
	runtime.UnlockOSThread()
	if lerr != nil {
		return nil, fmt.Errorf("listening for the egress proxy: %w", lerr)
	}
	defer ln.Close()
	return ln.(*net.TCPListener).File()
}

// startEgress starts the sandbox's egress proxy (its init is running, its network set).
func (m *Manager) startEgress(ctx context.Context, sb *Sandbox) error {
	lf, err := listenIn(sb.Init.Pid)
	if err != nil {
		return err
	}
	defer lf.Close()
	logf, err := os.OpenFile(filepath.Join(m.Store.dir(sb.Name), "egress.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		return err
	}
	defer null.Close()
	cmd := exec.CommandContext(ctx, m.Self, "__egress", m.Store.Root, sb.Name)
	cmd.Env = []string{"PATH=" + defaultPath}
	cmd.Dir = "/"
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, logf, logf
	cmd.ExtraFiles = []*os.File{lf}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the egress proxy of %s: %w", sb.Name, err)
	}
	proc, err := procOf(cmd.Process.Pid)
	if err != nil {
		return fmt.Errorf("starting the egress proxy of %s: %w", sb.Name, err)
	}
	_ = cmd.Process.Release()
	sb.Egress = proc
	return nil
}

// egress is a running proxy: the sandbox it serves and where its decisions go.
type egress struct {
	st      Store
	sandbox string
	byAddr  map[string]Resolve // fake address → test host
	byName  map[string]Resolve
	open    bool // no preset means open (sbx before 0.55)
	local   func(netip.Addr) bool
}

// RunEgress is the hidden __egress mode: the proxy of sandbox name in state root, on
// the listening socket inherited as fd 3, until it is signalled.
func RunEgress(root, name string) int {
	st := Store{Root: root}
	sb, err := st.Load(name)
	if err != nil {
		fmt.Fprintf(os.Stderr, "sbxsim egress: %v\n", err)
		return 1
	}
	ln, err := net.FileListener(os.NewFile(3, "listener"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "sbxsim egress: %v\n", err)
		return 1
	}
	e := &egress{st: st, sandbox: name, byAddr: map[string]Resolve{}, byName: map[string]Resolve{}, open: !sb.PolicyGate, local: hostAddr}
	for _, r := range sb.Resolve {
		e.byAddr[r.Addr], e.byName[r.Name] = r, r
	}
	return acceptUntilSignalled(ln, func(c net.Conn) { e.serve(c.(*net.TCPConn)) })
}

// hostAddr reports whether a is one of the host's own addresses (loopback included):
// the proxy never dials those but through SBXSIM_RESOLVE, so the sandbox reaches no more
// of the host than before.
func hostAddr(a netip.Addr) bool {
	if a.IsLoopback() || a.IsUnspecified() {
		return true
	}
	addrs, _ := net.InterfaceAddrs()
	for _, ia := range addrs {
		if n, ok := ia.(*net.IPNet); ok {
			if b, ok := netip.AddrFromSlice(n.IP); ok && b.Unmap() == a.Unmap() {
				return true
			}
		}
	}
	return false
}

// originalDst is where a redirected connection was going (SO_ORIGINAL_DST).
func originalDst(c *net.TCPConn) (netip.AddrPort, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return netip.AddrPort{}, err
	}
	var dst netip.AddrPort
	var gerr error
	err = raw.Control(func(fd uintptr) {
		// The kernel fills a sockaddr_in; IPv6Mreq is a 20-byte buffer that holds it.
		m, err := unix.GetsockoptIPv6Mreq(int(fd), unix.SOL_IP, 80 /* SO_ORIGINAL_DST */)
		if err != nil {
			gerr = err
			return
		}
		b := m.Multiaddr
		dst = netip.AddrPortFrom(netip.AddrFrom4([4]byte{b[4], b[5], b[6], b[7]}), uint16(b[2])<<8|uint16(b[3]))
	})
	if err == nil {
		err = gerr
	}
	return dst, err
}

// target is where an allowed connection goes, and what the policy is asked about.
type target struct {
	host string // the name the sandbox used, or the IP
	port int
	dial string // host:port dialled from the host
}

// route turns a destination into a target: a test host's address into its name.
func (e *egress) route(dst netip.AddrPort) target {
	if r, ok := e.byAddr[dst.Addr().String()]; ok {
		return target{host: r.Name, port: int(dst.Port()), dial: r.Target}
	}
	return target{host: dst.Addr().String(), port: int(dst.Port()), dial: dst.String()}
}

// check asks the current policy about t; a destination that is the host's own address
// (not a test host) is denied whatever the policy says.
func (e *egress) check(t target) (Decision, string) {
	p, err := e.st.LoadPolicy()
	if err != nil {
		return Decision{Reason: "policy unreadable: " + err.Error()}, ""
	}
	d := decide(p, e.st.LoadOrg(), e.sandbox, t.host, t.port, e.open)
	if d.Allow && !e.routed(t) {
		if a, err := netip.ParseAddr(t.host); err == nil && e.local(a) {
			d = Decision{Reason: "host address"}
		}
	}
	return d, p.Preset
}

// record logs a decision, with the shape the sandbox sees when denied, before the
// sandbox sees it.
func (e *egress) record(t target, d Decision, preset, shape string) {
	entry := LogEntry{Time: time.Now().UTC(), Sandbox: e.sandbox, Host: t.host, Port: t.port, Decision: "deny",
		Reason: d.Reason, Preset: preset, Shape: shape}
	if h, _, err := net.SplitHostPort(t.dial); err == nil {
		entry.IP = h
	}
	if d.Allow {
		entry.Decision, entry.Shape = "allow", ""
	}
	if d.Rule != nil {
		entry.RuleID, entry.Source = d.Rule.ID, d.Rule.Source
	}
	if err := e.st.appendLog(entry); err != nil {
		fmt.Fprintf(os.Stderr, "sbxsim egress: %v\n", err)
	}
}

// routed reports whether t is a test host.
func (e *egress) routed(t target) bool { _, ok := e.byName[t.host]; return ok }

var httpRequestLine = regexp.MustCompile(`^[A-Z]{3,10} \S+ HTTP/1\.[01]\r?$`)

// firstBytesWait bounds how long a denied connection waits for the client's first
// bytes (to tell HTTP from anything else) before it is reset.
const firstBytesWait = 2 * time.Second

func (e *egress) serve(c *net.TCPConn) {
	defer c.Close()
	dst, err := originalDst(c)
	local, _ := netip.ParseAddrPort(c.LocalAddr().String())
	if err != nil || dst == local || dst.Port() == egressPort && e.local(dst.Addr()) {
		e.explicit(c)
		return
	}
	t := e.route(dst)
	d, preset := e.check(t)
	if d.Allow {
		e.record(t, d, preset, "")
		e.splice(c, t)
		return
	}
	// Denied: the client's first bytes tell HTTP (a 403) from anything else (a reset).
	_ = c.SetReadDeadline(time.Now().Add(firstBytesWait))
	buf := make([]byte, 4096)
	n, _ := c.Read(buf)
	line, _, _ := bytes.Cut(buf[:n], []byte("\n"))
	if httpRequestLine.Match(line) {
		e.record(t, d, preset, "http-403")
		forbid(c, t, d)
		return
	}
	e.record(t, d, preset, "reset")
	reset(c)
}

// explicit serves the proxy used as an HTTP proxy: CONNECT host:port, or an
// absolute-form request.
func (e *egress) explicit(c *net.TCPConn) {
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	hostport := req.Host
	if req.Method != http.MethodConnect {
		hostport = req.URL.Host
	}
	host, ps, err := net.SplitHostPort(hostport)
	if err != nil {
		host, ps = hostport, "80"
		if req.Method == http.MethodConnect {
			ps = "443"
		}
	}
	port, _ := strconv.Atoi(ps)
	host = strings.ToLower(host)
	if host == "" || port == 0 {
		fmt.Fprint(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return
	}
	t := target{host: host, port: port, dial: net.JoinHostPort(host, strconv.Itoa(port))}
	if r, ok := e.byName[host]; ok {
		t.dial = r.Target
	}
	d, preset := e.check(t)
	if !d.Allow {
		e.record(t, d, preset, "http-403")
		forbid(c, t, d)
		return
	}
	e.record(t, d, preset, "")
	up, err := e.dial(t)
	if err != nil {
		fmt.Fprint(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return
	}
	defer up.Close()
	if req.Method == http.MethodConnect {
		fmt.Fprint(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	} else {
		req.Header.Del("Proxy-Connection")
		req.Header.Del("Proxy-Authorization")
		if err := req.Write(up); err != nil {
			return
		}
	}
	var pending []byte
	if n := br.Buffered(); n > 0 {
		pending, _ = br.Peek(n)
	}
	pipeBoth(c, up, pending)
}

// dial connects to an allowed target from the host; a name (not a test host) is
// resolved here, and none of its addresses may be the host's own.
func (e *egress) dial(t target) (net.Conn, error) {
	if !e.routed(t) {
		h, _, _ := net.SplitHostPort(t.dial)
		ips, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip", h)
		if err != nil {
			return nil, err
		}
		for _, a := range ips {
			if e.local(a) {
				return nil, errors.New("a host address")
			}
		}
	}
	return net.DialTimeout("tcp", t.dial, 10*time.Second)
}

// splice joins an allowed connection to its target;
// a failed dial resets the client, as a refused connection would.
func (e *egress) splice(c *net.TCPConn, t target) {
	up, err := e.dial(t)
	if err != nil {
		reset(c)
		return
	}
	defer up.Close()
	pipeBoth(c, up, nil)
}

// pipeBoth copies both ways, half-closes passed through, pending sent upstream first.
func pipeBoth(client net.Conn, up net.Conn, pending []byte) {
	if len(pending) > 0 {
		if _, err := up.Write(pending); err != nil {
			return
		}
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(up, client)
	go pipe(client, up)
	<-done
	<-done
}

// forbid answers a denied HTTP request with the proxy's 403.
func forbid(c net.Conn, t target, d Decision) {
	body := fmt.Sprintf("blocked by sandbox network policy: %s (%s)\n", net.JoinHostPort(t.host, strconv.Itoa(t.port)), d.Reason)
	fmt.Fprintf(c, "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nX-Sbx-Policy: deny\r\n"+
		"Content-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
}

// reset closes a connection with a RST (SO_LINGER 0).
func reset(c *net.TCPConn) {
	_ = c.SetLinger(0)
	_ = c.Close()
}
