//go:build linux

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

	"golang.org/x/sys/unix"
)

// Manager starts, stops and removes sandboxes recorded in a Store.
type Manager struct {
	Store Store
	// Self is the sbxsim executable, re-run in its hidden modes (__init, __proxy).
	Self string
	// Stderr receives progress notes ("Started Docker daemon in …").
	Stderr io.Writer
}

// initTimeout bounds each step of a sandbox start.
const initTimeout = 30 * time.Second

// start boots a stopped sandbox: a new init in fresh namespaces, its network, its
// dockerd, and its published ports. The caller holds the sandbox's lock. On failure
// everything started is ended again.
func (m *Manager) start(ctx context.Context, sb *Sandbox) (err error) {
	logPath := filepath.Join(m.Store.dir(sb.Name), "init.log")
	cfg, userns, err := m.initConfigFor(sb)
	defer closeAll(userns)
	if err != nil {
		return fmt.Errorf("starting %s: %w", sb.Name, err)
	}
	shares, err := m.startShares(ctx, sb, &cfg, userns, logPath)
	defer func() {
		for _, mnt := range shares {
			detachShare(mnt) // the sandbox's own mount keeps the share alive
		}
	}()
	if err != nil {
		return fmt.Errorf("starting %s: %w", sb.Name, err)
	}
	in, err := m.spawnInit(cfg, logPath, userns)
	if err != nil {
		return fmt.Errorf("starting init of %s: %w", sb.Name, err)
	}
	defer in.close()
	defer func() {
		if err == nil {
			_ = in.cmd.Process.Release() // init outlives this command
			return
		}
		for i := range sb.Ports {
			if p := sb.Ports[i].Proxy; p != nil {
				_ = p.Terminate(context.WithoutCancel(ctx), time.Second)
				sb.Ports[i].Proxy = nil
			}
		}
		if sb.Egress != nil {
			_ = sb.Egress.Terminate(context.WithoutCancel(ctx), time.Second)
			sb.Egress = nil
		}
		_ = in.cmd.Process.Kill()
		_ = in.cmd.Wait()
		if sb.Docker {
			_ = m.removeCgroup(sb.Name)
		}
		if sb.Net != nil {
			deleteVeth(context.WithoutCancel(ctx), sb.Net.Veth)
		}
		sb.Init, sb.Net = nil, nil
		err = fmt.Errorf("%w%s", err, logTail(logPath))
	}()
	proc, err := procOf(in.cmd.Process.Pid)
	if err != nil {
		return fmt.Errorf("starting init of %s: %w", sb.Name, err)
	}
	if sb.Docker {
		// A host whose cgroup2 hierarchy is read-only here (sbxsim itself in a
		// container) still gets a working sandbox, rooted at sbxsim's own cgroup.
		if err := m.placeInCgroup(sb.Name, proc.Pid); err != nil {
			fmt.Fprintf(m.Stderr, "WARN: sandbox %s has no cgroup of its own (%v); its /sys/fs/cgroup is sbxsim's cgroup subtree\n", sb.Name, err)
		}
	}
	if err := in.expect("mounted"); err != nil {
		return fmt.Errorf("starting %s: %w", sb.Name, err)
	}
	ns, err := setupNet(ctx, sb.Name, proc.Pid)
	if err != nil {
		return err
	}
	sb.Init, sb.Net = proc, ns
	if err := m.startEgress(ctx, sb); err != nil {
		return err
	}
	if _, err := io.WriteString(in.control, "net\n"); err != nil {
		return fmt.Errorf("starting %s: %w", sb.Name, err)
	}
	if err := in.expect("ready"); err != nil {
		return fmt.Errorf("starting %s: %w", sb.Name, err)
	}
	if sb.Docker {
		d0 := time.Now()
		dc := dockerClient(proc.Pid)
		if err := dc.waitReady(ctx, 60*time.Second); err != nil {
			return fmt.Errorf("start runtime: docker daemon failed to start inside the sandbox: %w", err)
		}
		fmt.Fprintf(m.Stderr, "INFO: Started Docker daemon in %.1fs\n", time.Since(d0).Seconds())
		if err := dc.ensureBaseImage(ctx); err != nil {
			return fmt.Errorf("loading base image into %s: %w", sb.Name, err)
		}
	}
	if sb.Clone != nil {
		if _, err := os.Stat(filepath.Join(sb.Clone.Dir, ".git")); errors.Is(err, os.ErrNotExist) {
			if err := m.initClone(ctx, sb); err != nil {
				return err
			}
		}
		if err := m.startGitDaemon(ctx, sb); err != nil {
			return err
		}
	}
	if err := m.publishSaved(ctx, sb); err != nil {
		return err
	}
	if sb.Clone != nil {
		if err := m.syncRemote(ctx, sb); err != nil {
			return fmt.Errorf("adding the host remote %s: %w", remote(sb.Name), err)
		}
	}
	return m.Store.Save(sb)
}

// closeAll closes files, ignoring nils.
func closeAll(fs []*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

// initConfigFor describes the sandbox's file system view and daemon to its init, and
// returns the user namespaces of the workspaces' idmapped mounts (passed to init from
// initUsernsFd on; the caller closes them).
func (m *Manager) initConfigFor(sb *Sandbox) (cfg initConfig, userns []*os.File, err error) {
	// The root is built on an empty directory of the sandbox's own: the tmpfs mounted
	// there exists in the sandbox's mount namespace only.
	cfg = initConfig{Name: sb.Name, Hide: sb.Hide, Root: filepath.Join(m.Store.dir(sb.Name), "root"), SSHAgent: sb.SSHAgent}
	for _, r := range sb.Resolve {
		cfg.Hosts = append(cfg.Hosts, r.Addr+"\t"+r.Name)
	}
	if err := os.MkdirAll(cfg.Root, 0o700); err != nil {
		return cfg, nil, err
	}
	if sb.Cloud != nil {
		cfg.Disk = filepath.Join(m.Store.dir(sb.Name), "disk")
	}
	if cfg.Tmp, cfg.Home, err = m.persistentDirs(sb.Name); err != nil {
		return cfg, nil, fmt.Errorf("making /tmp and %s: %w", AgentHome, err)
	}
	if cfg.Sudo, err = m.prepareSudo(sb.Name); err != nil {
		return cfg, nil, err
	}
	for i, w := range sb.Workspaces {
		// Bind at the real path: a symlinked component may live in a hidden directory.
		real, err := filepath.EvalSymlinks(w.Path)
		if err != nil {
			return cfg, userns, fmt.Errorf("workspace %w", err)
		}
		mount := Workspace{Path: real, ReadOnly: w.ReadOnly}
		var clone *Workspace
		if i == 0 && sb.Clone != nil {
			// The host's repository is only the source, read-only; the clone takes
			// its place (and the primary's, somewhere inside it).
			src, c := cloneMounts(sb.Clone)
			mount, real, clone = src, sb.Clone.Root, &c
		}
		cfg.Workspaces = append(cfg.Workspaces, mount)
		ns, err := m.idmapFor(real)
		if errors.Is(err, errNoIdmap) && len(cfg.Userns) == 0 {
			// The primary workspace: agent takes its owner's ids (RunAs) instead.
			var st unix.Stat_t
			if unix.Stat(real, &st) == nil {
				sb.RunAs = &IDs{UID: int(st.Uid), GID: int(st.Gid)}
				fmt.Fprintf(m.Stderr, "WARN: %v; commands run as uid %d (the workspace owner) instead of agent's %d\n", err, st.Uid, AgentUID)
			}
			err = nil
		} else if errors.Is(err, errNoIdmap) {
			fmt.Fprintf(m.Stderr, "WARN: %v; agent writes there only as the host's permissions allow\n", err)
			err = nil
		}
		if err != nil {
			return cfg, userns, err
		}
		fd := 0
		if ns != nil {
			fd = initUsernsFd + len(userns)
			userns = append(userns, ns)
		}
		cfg.Userns = append(cfg.Userns, fd)
		if clone != nil { // sandbox-local storage, agent's own: no idmap
			cfg.Workspaces = append(cfg.Workspaces, *clone)
			cfg.Userns = append(cfg.Userns, 0)
		}
	}
	if !sb.Docker {
		return cfg, userns, nil
	}
	if sb.Compose != "" {
		if _, err := executableFile(sb.Compose); err != nil {
			return cfg, userns, fmt.Errorf("the docker compose plugin recorded at create: %w", err)
		}
		cfg.ComposePlugin = sb.Compose
	}
	cfg.DataRoot = filepath.Join(m.Store.dir(sb.Name), "docker")
	if err := os.MkdirAll(cfg.DataRoot, 0o700); err != nil {
		return cfg, userns, err
	}
	dockerd, err := lookTool("dockerd")
	if err != nil {
		return cfg, userns, err
	}
	cfg.Dockerd = []string{dockerd, "--data-root=/var/lib/docker", "--host=unix:///var/run/docker.sock",
		"--pidfile=/run/docker.pid", "--log-level=warn", "--shutdown-timeout=2"}
	return cfg, userns, nil
}

// initProcess is a just-started init and the parent's ends of the init protocol.
type initProcess struct {
	cmd     *exec.Cmd
	status  *os.File // init's status lines
	lines   *bufio.Reader
	control *os.File // "net\n" once the network is ready
}

// spawnInit starts sbxsim's __init mode in new mount, PID, UTS, IPC and network
// namespaces, in a session of its own, logging to logPath.
func (m *Manager) spawnInit(cfg initConfig, logPath string, userns []*os.File) (*initProcess, error) {
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer statusW.Close()
	controlR, controlW, err := os.Pipe()
	if err != nil {
		statusR.Close()
		return nil, err
	}
	defer controlR.Close()
	cmd := exec.Command(m.Self, "__init", cfg.Name, m.Store.Root)
	cmd.Env = []string{"PATH=" + defaultPath, initConfigEnv + "=" + string(cfgJSON)}
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = append([]*os.File{statusW, controlR}, userns...) // initStatusFd, initControlFd, initUsernsFd…
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWNET,
		Setsid:     true,
	}
	if err := cmd.Start(); err != nil {
		statusR.Close()
		controlW.Close()
		return nil, err
	}
	return &initProcess{cmd: cmd, status: statusR, lines: bufio.NewReader(statusR), control: controlW}, nil
}

func (p *initProcess) close() {
	p.status.Close()
	p.control.Close()
}

// expect reads init's next status line, with a deadline.
func (p *initProcess) expect(want string) error {
	_ = p.status.SetReadDeadline(time.Now().Add(initTimeout))
	line, err := p.lines.ReadString('\n')
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
	if sb.Egress != nil {
		errs = append(errs, sb.Egress.Terminate(ctx, time.Second))
		sb.Egress = nil
	}
	if sb.Init != nil {
		errs = append(errs, sb.Init.Terminate(ctx, 5*time.Second)) // init needs ≤ 3 s for dockerd
	}
	if sb.Docker {
		errs = append(errs, m.removeCgroup(sb.Name))
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
	if sb.Clone != nil {
		if err := m.dropRemote(ctx, sb); err != nil {
			fmt.Fprintf(m.Stderr, "WARN: removing the host remote %s: %v\n", remote(name), err)
		}
	}
	m.Store.killStopper(name)
	return m.Store.discard(name)
}
