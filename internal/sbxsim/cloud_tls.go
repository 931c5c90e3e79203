//go:build linux

package sbxsim

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"
)

// A cloud sandbox's published port is a public https URL (the contract's Cloud
// section). sbxsim serves it from this machine: the port's proxy (the same process that
// forwards a local published port, run as `__tlsproxy`) terminates TLS with a
// certificate of sbxsim's own test CA and forwards the plain stream to the sandbox's
// port. The URL is https://127.0.0.1:PORT, which needs no name resolution; a client
// trusts the CA's certificate, written at SBXSIM_CLOUD_CA (default
// SBXSIM_STATE/cloud/ca.pem, its key beside it as ca.pem.key).

// cloudCAPaths are the test CA's certificate and key files.
func (c *cli) cloudCAPaths() (cert, key string) {
	cert = filepath.Join(c.m.Store.Root, "ca.pem") // the cloud store's root
	if v, ok := c.env.LookupEnv("SBXSIM_CLOUD_CA"); ok && v != "" {
		cert = v
	}
	return cert, cert + ".key"
}

// ensureCloudCA makes the test CA unless its files exist, under a lock so that
// concurrent publishes agree on one CA.
func ensureCloudCA(certPath, keyPath string) error {
	if err := os.MkdirAll(filepath.Dir(certPath), 0o755); err != nil {
		return fmt.Errorf("making the cloud test CA: %w", err)
	}
	lf, err := os.OpenFile(certPath+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("making the cloud test CA: %w", err)
	}
	defer lf.Close()
	if err := unix.Flock(int(lf.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("making the cloud test CA: %w", err)
	}
	defer func() { _ = unix.Flock(int(lf.Fd()), unix.LOCK_UN) }()
	if _, err := tls.LoadX509KeyPair(certPath, keyPath); err == nil {
		return nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("making the cloud test CA: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: "sbxsim cloud test CA", Organization: []string{"sbxsim"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("making the cloud test CA: %w", err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("making the cloud test CA: %w", err)
	}
	// The key first: a certificate without its key is made again.
	if err := writeAtomically(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		return err
	}
	return writeAtomically(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

func writeAtomically(path string, b []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, mode); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func randomSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

// cloudURL is the public URL of a cloud sandbox's port published at hostPort.
func cloudURL(hostPort int) string { return "https://127.0.0.1:" + strconv.Itoa(hostPort) }

// RunTLSProxy is the hidden `__tlsproxy TARGET CA-CERT CA-KEY NAME` mode: RunProxy's
// forwarding behind TLS, with a certificate for 127.0.0.1, localhost and NAME made at
// start and signed by the test CA.
func RunTLSProxy(args []string) int {
	if len(args) != 4 {
		return 2
	}
	cert, err := leafCertificate(args[1], args[2], args[3])
	if err != nil {
		fmt.Fprintf(os.Stderr, "sbxsim tls proxy: %v\n", err)
		return 1
	}
	ln, err := net.FileListener(os.NewFile(3, "listener"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "sbxsim tls proxy: %v\n", err)
		return 1
	}
	tl := tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	target := args[0]
	return acceptUntilSignalled(tl, func(c net.Conn) {
		// The handshake here, not on Accept's goroutine: a slow client holds no other.
		if err := c.(*tls.Conn).HandshakeContext(context.Background()); err != nil {
			c.Close()
			return
		}
		forward(c, target) // a *tls.Conn half-closes with close_notify
	})
}

// leafCertificate makes a server certificate for the names, signed by the CA.
func leafCertificate(caCertPath, caKeyPath, name string) (tls.Certificate, error) {
	ca, err := tls.LoadX509KeyPair(caCertPath, caKeyPath)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("loading the cloud test CA: %w", err)
	}
	caCert, err := x509.ParseCertificate(ca.Certificate[0])
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("loading the cloud test CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: randomSerial(),
		Subject:      pkix.Name{CommonName: name},
		DNSNames:     []string{"localhost", name},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(30 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, ca.PrivateKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("signing the port's certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der, caCert.Raw}, PrivateKey: key}, nil
}

// cloudProxyArgs are the proxy's arguments for a cloud sandbox's port: the TLS front,
// whose URL is recorded in p.
func (m *Manager) cloudProxyArgs(sb *Sandbox, p *Port, target string) ([]string, error) {
	cert, key := sb.Cloud.CA, sb.Cloud.CA+".key"
	if cert == "" {
		return nil, errors.New("this cloud sandbox has no test CA recorded (made by an older sbxsim?)")
	}
	if err := ensureCloudCA(cert, key); err != nil {
		return nil, err
	}
	p.URL = cloudURL(p.HostPort)
	return []string{"__tlsproxy", target, cert, key, sb.Name + ".sbxsim.cloud"}, nil
}

// cloudURLs are the public URLs of a cloud sandbox's published ports (while it runs).
func (c *cli) cloudURLs(sb *Sandbox) []string {
	out := []string{}
	for _, p := range publicPorts(sb) {
		if p.URL != "" {
			out = append(out, p.URL)
		}
	}
	return out
}

// cloudPorts is ports under --cloud: the same flags and JSON (each port with its
// "url"), a URL column in the table, and a note on stderr naming the CA to trust.
func (c *cli) cloudPorts(ctx context.Context, args []string) error {
	c.enterCloud(ctx)
	fs, name, specs, err := c.portsArgs(args)
	if err != nil {
		return err
	}
	sb, err := c.m.Store.Load(name)
	if err != nil {
		return notFound(err)
	}
	if len(specs) > 0 {
		if _, err := c.cloudStart(ctx, name); err != nil {
			return notFound(err)
		}
	}
	if len(specs) > 0 || fs.has("unpublish") {
		if sb, err = c.changePorts(ctx, name, specs, fs.values["unpublish"]); err != nil {
			return notFound(err)
		}
	}
	if len(specs) > 0 {
		c.noteCloudCA(sb)
	}
	if !sb.Running() {
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
	fmt.Fprintln(tw, "SANDBOX PORT\tPROTOCOL\tURL")
	for _, p := range ports {
		fmt.Fprintf(tw, "%d\t%s\t%s\n", p.SandboxPort, p.Protocol, p.URL)
	}
	return tw.Flush()
}

// cloudPort is port (sbx >= 0.55) under --cloud: publish starts a stopped sandbox as
// cloud's exec does.
func (c *cli) cloudPort(ctx context.Context, args []string) error {
	c.enterCloud(ctx)
	publish := len(args) >= 2 && args[0] == "publish"
	if publish {
		if _, err := c.m.Store.Load(args[1]); err == nil {
			if _, err := c.cloudStart(ctx, args[1]); err != nil {
				return err
			}
		}
	}
	if err := c.port(ctx, args); err != nil {
		return err
	}
	if publish {
		if sb, err := c.m.Store.Load(args[1]); err == nil {
			c.noteCloudCA(sb)
		}
	}
	return nil
}

// noteCloudCA says, on stderr, that the URLs are public and which CA signs them.
func (c *cli) noteCloudCA(sb *Sandbox) {
	if sb.Cloud == nil {
		return
	}
	fmt.Fprintf(c.env.Stderr, "Note: the URLs are public (the Docker login does not protect them); "+
		"their certificates are signed by sbxsim's test CA %s\n", sb.Cloud.CA)
}
