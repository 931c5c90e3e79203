package sbxsim

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Manager starts, stops and removes sandboxes recorded in a Store.
type Manager struct {
	Store Store
	// Self is the sbxsim executable, re-run in its hidden modes (__init, __proxy).
	Self string
	// Stderr receives progress notes ("Started Docker daemon in …").
	Stderr io.Writer
}

// hiddenDirs are covered by an empty tmpfs inside every sandbox: the host's home
// directories (no ~/.ssh, ~/.docker), /run and /var/run (no host Docker socket), /tmp
// (private), the host's Docker and containerd state, and sbxsim's own state.
func (m *Manager) hiddenDirs() []string {
	return []string{"/root", "/home", "/run", "/var/run", "/tmp", "/var/lib/docker", "/var/lib/containerd",
		"/etc/docker", "/var/lib/sbxsim", m.Store.Root}
}

// initTimeout bounds each step of a sandbox start.
const initTimeout = 30 * time.Second

// start boots a stopped sandbox: a new init in fresh namespaces, its network, its
// dockerd, and its published ports. The caller holds the sandbox's lock.
func (m *Manager) start(ctx context.Context, sb *Sandbox) (err error) {
	dir := m.Store.dir(sb.Name)
	logPath := filepath.Join(dir, "init.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("starting %s: %w", sb.Name, err)
	}
	defer logf.Close()

	cfg := initConfig{Name: sb.Name, Hide: m.hiddenDirs()}
	for _, w := range sb.Workspaces {
		real, err := filepath.EvalSymlinks(w.Path)
		if err != nil {
			return fmt.Errorf("starting %s: workspace %w", sb.Name, err)
		}
		cfg.Workspaces = append(cfg.Workspaces, Workspace{Path: real, ReadOnly: w.ReadOnly})
	}
	if sb.Docker {
		cfg.DataRoot = filepath.Join(dir, "docker")
		if err := os.MkdirAll(cfg.DataRoot, 0o700); err != nil {
			return fmt.Errorf("starting %s: %w", sb.Name, err)
		}
		dockerd, err := lookTool("dockerd")
		if err != nil {
			return fmt.Errorf("starting %s: %w", sb.Name, err)
		}
		cfg.Dockerd = []string{dockerd, "--data-root=/var/lib/docker", "--host=unix:///var/run/docker.sock",
			"--pidfile=/run/docker.pid", "--log-level=warn", "--shutdown-timeout=2"}
	}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return err
	}

	statusR, statusW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer statusR.Close()
	controlR, controlW, err := os.Pipe()
	if err != nil {
		statusW.Close()
		return err
	}
	defer controlW.Close()
	cmd := exec.Command(m.Self, "__init", string(cfgJSON))
	cmd.Env = []string{"PATH=" + defaultPath}
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{statusW, controlR} // fds 3 and 4
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWNET,
		Setsid:     true,
	}
	err = cmd.Start()
	statusW.Close()
	controlR.Close()
	if err != nil {
		return fmt.Errorf("starting init of %s: %w", sb.Name, err)
	}
	var ns *NetSlot
	defer func() {
		if err == nil {
			_ = cmd.Process.Release() // init outlives this command
			return
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if ns != nil {
			deleteVeth(context.Background(), ns.Veth)
		}
		err = fmt.Errorf("%w%s", err, logTail(logPath))
	}()
	proc, err := procOf(cmd.Process.Pid)
	if err != nil {
		return fmt.Errorf("starting init of %s: %w", sb.Name, err)
	}
	status := bufio.NewReader(statusR)
	if err := expectLine(statusR, status, "mounted"); err != nil {
		return fmt.Errorf("starting %s: %w", sb.Name, err)
	}
	if ns, err = setupNet(ctx, sb.Name, proc.Pid); err != nil {
		return err
	}
	if _, err := io.WriteString(controlW, "net\n"); err != nil {
		return fmt.Errorf("starting %s: %w", sb.Name, err)
	}
	if err := expectLine(statusR, status, "ready"); err != nil {
		return fmt.Errorf("starting %s: %w", sb.Name, err)
	}
	sb.Init, sb.Net = proc, ns
	if sb.Docker {
		d0 := time.Now()
		dc := dockerClient(proc.Pid)
		if err := dc.waitReady(ctx, 60*time.Second); err != nil {
			return fmt.Errorf("failed to start sandbox: start runtime: docker daemon failed to start inside the sandbox: %w", err)
		}
		fmt.Fprintf(m.Stderr, "INFO: Started Docker daemon in %.1fs\n", time.Since(d0).Seconds())
		if err := dc.ensureBaseImage(ctx); err != nil {
			return fmt.Errorf("loading base image into %s: %w", sb.Name, err)
		}
	}
	if err := m.publishSaved(ctx, sb); err != nil {
		return err
	}
	if err := m.Store.Save(sb); err != nil {
		return err
	}
	return nil
}

// expectLine reads one status line from init, with a deadline.
func expectLine(f *os.File, r *bufio.Reader, want string) error {
	_ = f.SetReadDeadline(time.Now().Add(initTimeout))
	line, err := r.ReadString('\n')
	line = strings.TrimSpace(line)
	switch {
	case line == want:
		return nil
	case strings.HasPrefix(line, "error: "):
		return errors.New(strings.TrimPrefix(line, "error: "))
	case err != nil:
		return fmt.Errorf("init exited or hung waiting for %q: %w", want, err)
	default:
		return fmt.Errorf("unexpected status %q from init", line)
	}
}

// logTail returns the end of a log file, to explain a failed start.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return ""
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return "\n--- " + path + " ---\n" + strings.TrimSpace(string(b))
}

// stop ends a sandbox's processes (proxies, then init and with it every process in its
// PID namespace) and removes its veth pair. State and the docker data root stay. The
// caller holds the sandbox's lock.
func (m *Manager) stop(ctx context.Context, sb *Sandbox) error {
	var errs []error
	for i := range sb.Ports {
		if p := sb.Ports[i].Proxy; p != nil {
			errs = append(errs, p.Terminate(ctx, time.Second))
			sb.Ports[i].Proxy = nil
		}
	}
	if sb.Init != nil {
		errs = append(errs, sb.Init.Terminate(ctx, 5*time.Second)) // init needs ≤ 3 s for dockerd
	}
	if sb.Net != nil {
		deleteVeth(ctx, sb.Net.Veth)
		if vethExists(ctx, sb.Net.Veth) {
			errs = append(errs, fmt.Errorf("veth %s of %s is still there", sb.Net.Veth, sb.Name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stopping %s: %w", sb.Name, err)
	}
	sb.Init, sb.Net = nil, nil
	return m.Store.Save(sb)
}

// ensureRunning starts the sandbox if it is stopped, under its lock, and returns its
// current state.
func (m *Manager) ensureRunning(ctx context.Context, name string) (*Sandbox, error) {
	sb, err := m.Store.Load(name)
	if err != nil {
		return nil, err
	}
	if sb.Running() {
		return sb, nil
	}
	l, err := m.Store.Lock(ctx, name)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	if sb, err = m.Store.Load(name); err != nil {
		return nil, err
	}
	if sb.Running() {
		return sb, nil
	}
	if err := m.stop(ctx, sb); err != nil { // clear what a crashed run left behind
		return nil, err
	}
	if err := m.start(ctx, sb); err != nil {
		return nil, fmt.Errorf("failed to start sandbox: %w", err)
	}
	return sb, nil
}

// remove stops a sandbox and deletes every trace of it.
func (m *Manager) remove(ctx context.Context, name string) error {
	l, err := m.Store.Lock(ctx, name)
	if err != nil {
		return err
	}
	defer l.Unlock()
	sb, err := m.Store.Load(name)
	if err != nil {
		return err
	}
	if err := m.stop(ctx, sb); err != nil {
		return err
	}
	return m.Store.discard(name)
}
