package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// MaxCurlBody caps docker_curl's request body; MaxCurlResponse what is read of a reply.
const (
	MaxCurlBody     = 1 << 20
	MaxCurlResponse = 256 << 10
	maxCurlResult   = MaxCurlResponse + 16<<10 // the response and its status and headers
)

var curlMethods = map[string]bool{"GET": true, "POST": true, "PUT": true, "DELETE": true, "HEAD": true, "PATCH": true, "OPTIONS": true}

// loopbackHosts are the only hosts docker_curl talks to, each as the address it dials
// (no name resolution: "localhost" is 127.0.0.1 here, whatever /etc/hosts says).
var loopbackHosts = map[string]string{"127.0.0.1": "127.0.0.1", "localhost": "127.0.0.1", "::1": "::1"}

type curlArgs struct {
	URL        string   `json:"url"`
	TimeoutSec *float64 `json:"timeoutSec"`
	Method     string   `json:"method"`
	Body       *string  `json:"body"`
}

// curlTarget checks a docker_curl URL and returns the address to dial. The host must be
// loopback and the port one that this sandbox published on it, per `sbx ports` asked now;
// otherwise nothing is dialled.
func (d *Deployer) curlTarget(ctx context.Context, raw string) (*neturl.URL, string, error) {
	if err := noControl("url", raw); err != nil {
		return nil, "", err
	}
	u, err := neturl.Parse(raw)
	if err != nil {
		return nil, "", refuse("url %q: %v", raw, err)
	}
	if u.Scheme != "http" {
		return nil, "", refuse("url %q: only http:// to this sandbox's published ports", raw)
	}
	if u.User != nil {
		return nil, "", refuse("url %q: no credentials in URLs", raw)
	}
	ip, ok := loopbackHosts[strings.ToLower(u.Hostname())]
	if !ok {
		return nil, "", refuse("host %q: docker_curl only reaches 127.0.0.1, localhost or ::1", u.Hostname())
	}
	port := 80
	if p := u.Port(); p != "" {
		if port, err = portNumber(p); err != nil {
			return nil, "", refuse("url %q: %v", raw, err)
		}
	}
	name, err := d.sandbox(ctx)
	if err != nil {
		return nil, "", err
	}
	list, err := d.Sbx.ListPorts(ctx, name)
	if err != nil {
		return nil, "", fmt.Errorf("asking sbx which ports the sandbox published: %w", err)
	}
	var published []string
	for _, m := range list {
		if !strings.HasPrefix(m.Protocol, "tcp") || !m.Loopback() {
			continue
		}
		published = append(published, strconv.Itoa(m.HostPort))
		if m.HostPort == port && (m.HostIP == ip || m.Protocol == "tcp") { // tcp: both loopbacks
			return u, net.JoinHostPort(ip, strconv.Itoa(port)), nil
		}
	}
	sort.Strings(published)
	have := "none"
	if len(published) > 0 {
		have = strings.Join(published, ", ")
	}
	return nil, "", refuse("%s:%d is not a port this sandbox published (published: %s); nothing was sent", ip, port, have)
}

func (d *Deployer) curl(ctx context.Context, raw json.RawMessage) (string, error) {
	a, err := decode[curlArgs](raw)
	if err != nil {
		return "", err
	}
	method := strings.ToUpper(a.Method)
	if method == "" {
		method = "GET"
	}
	if !curlMethods[method] {
		return "", refuse("method %q", a.Method)
	}
	timeout := 10 * time.Second
	if a.TimeoutSec != nil {
		if *a.TimeoutSec <= 0 || *a.TimeoutSec > 300 {
			return "", refuse("timeoutSec %v: want 0-300", *a.TimeoutSec)
		}
		timeout = time.Duration(*a.TimeoutSec * float64(time.Second))
	}
	var body io.Reader
	if a.Body != nil {
		if len(*a.Body) > MaxCurlBody {
			return "", refuse("body of %d bytes: the limit is %d", len(*a.Body), MaxCurlBody)
		}
		body = strings.NewReader(*a.Body)
	}
	u, addr, err := d.curlTarget(ctx, a.URL)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return "", refuse("request: %v", err)
	}
	client := &http.Client{
		Transport: &http.Transport{
			Proxy: nil, // never a proxy from the environment
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				var dl net.Dialer
				return dl.DialContext(ctx, "tcp", addr) // only the checked address
			},
			DisableKeepAlives: true,
		},
		// A redirect is reported, not followed: its target was not checked.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", method, u, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxCurlResponse+1))
	if err != nil {
		return "", fmt.Errorf("%s %s: reading the response: %w", method, u, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP %s\n", resp.Status)
	keys := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if b.Len() > 8<<10 {
			b.WriteString("[more headers omitted]\n")
			break
		}
		fmt.Fprintf(&b, "%s: %s\n", k, capTextAt(strings.Join(resp.Header[k], ", "), 1<<10))
	}
	b.WriteString("\n")
	if len(data) > MaxCurlResponse {
		b.Write(data[:MaxCurlResponse])
		fmt.Fprintf(&b, "\n[response truncated at %d bytes]", MaxCurlResponse)
	} else {
		b.Write(data)
	}
	return b.String(), nil
}

// probeNonLoopback tries each published TCP port on the host's first non-loopback IPv4
// address (a short dial): a loopback-only listener refuses. It returns the evidence and
// the addresses that accepted.
func probeNonLoopback(ctx context.Context, list []sbx.Published) (string, []string) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "no interface addresses to probe from: " + err.Error(), nil
	}
	var ip net.IP
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			ip = n.IP
			break
		}
	}
	if ip == nil {
		return "the host has no non-loopback IPv4 address to probe from", nil
	}
	var refused, reachable []string
	for _, m := range list {
		if !strings.HasPrefix(m.Protocol, "tcp") {
			continue
		}
		addr := net.JoinHostPort(ip.String(), strconv.Itoa(m.HostPort))
		dctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		var dl net.Dialer
		c, err := dl.DialContext(dctx, "tcp", addr)
		cancel()
		if err == nil {
			c.Close()
			reachable = append(reachable, addr)
		} else {
			refused = append(refused, addr)
		}
	}
	return "not reachable on " + orNone(refused), reachable
}
