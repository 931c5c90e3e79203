//go:build linux

package sbxsim

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// baseImage is the image loaded into every sandbox's daemon: images cannot be pulled
// here, so it is built locally from Debian's busybox-static.
const baseImage = "busybox:latest"

// innerDocker talks to a sandbox's own dockerd over its socket, reached from the host
// through /proc/<init>/root — no process is started for it.
type innerDocker struct {
	http *http.Client
}

// dockerClient returns a client for the dockerd of the sandbox whose init is pid.
func dockerClient(pid int) innerDocker {
	// In the sandbox's root /var/run is a relative link to /run; name /run itself, since
	// a link met under /proc/<pid>/root is not resolved in the sandbox's root.
	sock := fmt.Sprintf("/proc/%d/root/run/docker.sock", pid)
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}
	return innerDocker{http: &http.Client{Transport: tr}}
}

func (d innerDocker) do(ctx context.Context, method, path string, body io.Reader) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://docker"+path, body)
	if err != nil {
		return 0, nil, err
	}
	resp, err := d.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, b, err
}

// waitReady polls the daemon's /_ping until it answers or timeout passes.
func (d innerDocker) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		code, _, err := d.do(ctx, http.MethodGet, "/_ping", nil)
		if err == nil && code == http.StatusOK {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("_ping: HTTP %d", code)
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("no answer after %s: %w", timeout, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ensureBaseImage imports the busybox base image unless the daemon already has it (its
// data root survives stop/start).
func (d innerDocker) ensureBaseImage(ctx context.Context) error {
	code, _, err := d.do(ctx, http.MethodGet, "/images/"+baseImage+"/json", nil)
	if err != nil {
		return err
	}
	if code == http.StatusOK {
		return nil
	}
	rootfs, err := busyboxRootfs(ctx)
	if err != nil {
		return err
	}
	repo, tag, _ := strings.Cut(baseImage, ":")
	q := url.Values{"fromSrc": {"-"}, "repo": {repo}, "tag": {tag}, "changes": {`CMD ["sh"]`}}
	code, body, err := d.do(ctx, http.MethodPost, "/images/create?"+q.Encode(), bytes.NewReader(rootfs))
	if err != nil {
		return fmt.Errorf("importing %s: %w", baseImage, err)
	}
	if code != http.StatusOK || bytes.Contains(body, []byte(`"error"`)) {
		return fmt.Errorf("importing %s: HTTP %d: %s", baseImage, code, body)
	}
	return nil
}

// busyboxRootfs builds a tar of a minimal root file system: the static busybox, a link
// for each of its applets, /etc/passwd and /etc/group, and the usual empty directories.
func busyboxRootfs(ctx context.Context) ([]byte, error) {
	bb, err := lookTool("busybox")
	if err != nil {
		return nil, err
	}
	bin, err := os.ReadFile(bb)
	if err != nil {
		return nil, fmt.Errorf("reading busybox: %w", err)
	}
	list, err := runTool(ctx, nil, "busybox", "--list")
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	now := time.Now()
	dir := func(name string, mode int64) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, ModTime: now})
	}
	file := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: now}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	for _, d := range []string{"bin", "dev", "etc", "proc", "root", "sys", "usr", "usr/bin", "var", "var/www"} {
		if err := dir(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := dir("tmp", 0o1777); err != nil {
		return nil, err
	}
	if err := file("bin/busybox", 0o755, bin); err != nil {
		return nil, err
	}
	for _, a := range strings.Fields(list) {
		if a == "busybox" {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + a, Linkname: "busybox", Mode: 0o777, ModTime: now}); err != nil {
			return nil, err
		}
	}
	if err := file("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")); err != nil {
		return nil, err
	}
	if err := file("etc/group", 0o644, []byte("root:x:0:\nnogroup:x:65534:\n")); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
