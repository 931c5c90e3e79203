package deploy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
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

// curlDest is what docker_curl may reach: the URL, the one address it dials, and
// whether the URL is a cloud sandbox's public one.
type curlDest struct {
	url    *neturl.URL
	addr   string
	public bool
}

// curlTarget checks a docker_curl URL and returns where to send it. An http URL's host
// must be loopback and its port one that this sandbox published on it; an https URL must
// be, exactly, a public URL that sbx gave for one of this (cloud) sandbox's ports. Both
// per `sbx ports` asked now; otherwise nothing is dialled.
func (d *Deployer) curlTarget(ctx context.Context, raw string) (curlDest, error) {
	if err := noControl("url", raw); err != nil {
		return curlDest{}, err
	}
	u, err := neturl.Parse(raw)
	if err != nil {
		return curlDest{}, refuse("url %q: %v", raw, err)
	}
	if u.User != nil {
		return curlDest{}, refuse("url %q: no credentials in URLs", raw)
	}
	switch {
	case u.Scheme == "https" && d.Sbx.Cloud:
		return d.publicTarget(ctx, u)
	case u.Scheme == "http":
		return d.loopbackTarget(ctx, u)
	case u.Scheme == "https":
		return curlDest{}, refuse("url %q: https only to a cloud sandbox's public URL; this sandbox is local: http:// to its published ports", raw)
	}
	return curlDest{}, refuse("url %q: only http:// to this sandbox's published ports (or, in a cloud sandbox, their public https:// URLs)", raw)
}

// loopbackTarget checks an http URL: a loopback host and a port this sandbox published.
func (d *Deployer) loopbackTarget(ctx context.Context, u *neturl.URL) (curlDest, error) {
	ip, ok := loopbackHosts[strings.ToLower(u.Hostname())]
	if !ok {
		return curlDest{}, refuse("host %q: docker_curl only reaches 127.0.0.1, localhost or ::1", u.Hostname())
	}
	port := 80
	if p := u.Port(); p != "" {
		var err error
		if port, err = portNumber(p); err != nil {
			return curlDest{}, refuse("url %q: %v", u, err)
		}
	}
	list, err := d.publishedNow(ctx)
	if err != nil {
		return curlDest{}, err
	}
	var published []string
	for _, m := range list {
		// A port with a public URL is served there (over TLS), not at its loopback port.
		if !strings.HasPrefix(m.Protocol, "tcp") || !m.Loopback() || m.URL != "" {
			continue
		}
		published = append(published, strconv.Itoa(m.HostPort))
		if m.HostPort == port && (m.HostIP == ip || m.Protocol == "tcp") { // tcp: both loopbacks
			return curlDest{url: u, addr: net.JoinHostPort(ip, strconv.Itoa(port))}, nil
		}
	}
	sort.Strings(published)
	return curlDest{}, refuse("%s:%d is not a port this sandbox published (published: %s); nothing was sent", ip, port, listOrNone(published))
}

// publicTarget checks an https URL against the public URLs sbx reported for this
// sandbox's ports: the same scheme, host and port, or nothing is sent. docker_curl is
// not a general fetcher; only what the session itself published is reached.
func (d *Deployer) publicTarget(ctx context.Context, u *neturl.URL) (curlDest, error) {
	list, err := d.publishedNow(ctx)
	if err != nil {
		return curlDest{}, err
	}
	addr, ok := matchPublic(u, list)
	if !ok {
		var published []string
		for _, m := range list {
			if publicURL(m.URL) {
				published = append(published, m.URL)
			}
		}
		sort.Strings(published)
		return curlDest{}, refuse("%s is not a public URL of a port this sandbox published (published: %s); nothing was sent", origin(u), listOrNone(published))
	}
	return curlDest{url: u, addr: addr, public: true}, nil
}

// certProblem says in words why a server's TLS certificate was refused, or "" when err
// is not a refused certificate.
func certProblem(err error) string {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &unknown):
		return "is signed by an authority this host does not trust"
	case errors.As(err, &host):
		return "is not valid for " + host.Host
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return "has expired or is not valid yet"
	case errors.As(err, &invalid):
		return "is not valid"
	case errors.As(err, &verify):
		return "was not accepted"
	}
	return ""
}

// matchPublic finds u's origin among the mappings' public URLs and returns the address
// to dial (host:port, the host as sbx named it).
func matchPublic(u *neturl.URL, list []sbx.Published) (string, bool) {
	want := origin(u)
	for _, m := range list {
		if !publicURL(m.URL) {
			continue
		}
		p, err := neturl.Parse(m.URL)
		if err == nil && origin(p) == want {
			return hostPort(p), true
		}
	}
	return "", false
}

// origin is a URL's scheme, host (lower case) and port (the scheme's default when none).
func origin(u *neturl.URL) string {
	return strings.ToLower(u.Scheme) + "://" + hostPort(u)
}

func hostPort(u *neturl.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[strings.ToLower(u.Scheme)]
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// listOrNone lists what a refusal says was published.
func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

// publishedNow asks sbx which ports this session's sandbox publishes.
func (d *Deployer) publishedNow(ctx context.Context) ([]sbx.Published, error) {
	name, err := d.sandbox(ctx)
	if err != nil {
		return nil, err
	}
	list, err := d.Sbx.ListPorts(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("asking sbx which ports the sandbox published: %w", err)
	}
	return list, nil
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
	target, err := d.curlTarget(ctx, a.URL)
	if err != nil {
		return "", err
	}
	u, addr := target.url, target.addr
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
			// TLSClientConfig nil: the system's roots verify a public URL's certificate,
			// for the host the URL names; there is no way to skip the check.
		},
		// A redirect is reported, not followed: its target was not checked.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if problem := certProblem(err); problem != "" {
		return "", fmt.Errorf("%s %s: the TLS certificate of %s %s, so nothing was sent; docker_curl verifies it "+
			"with the system's roots and never skips the check (trust its authority on this host, e.g. by SSL_CERT_FILE, "+
			"only if it is yours): %w", method, u, u.Host, problem, err)
	}
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", method, u, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxCurlResponse+1))
	if err != nil {
		return "", fmt.Errorf("%s %s: reading the response: %w", method, u, err)
	}
	var b strings.Builder
	if target.public {
		fmt.Fprintf(&b, "PUBLIC URL: %s is reachable by anyone who has it; the Docker login does not protect it\n", origin(u))
	}
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
