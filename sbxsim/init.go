package sbxsim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// initConfigEnv carries the init's configuration (JSON), keeping its command line short
// for ps: `sbxsim __init NAME STATE-DIR`.
const initConfigEnv = "SBXSIM_INIT_CONFIG"

// initConfig is what the parent passes to the sandbox init.
type initConfig struct {
	Name       string      `json:"name"`
	Workspaces []Workspace `json:"workspaces"` // paths already resolved (no symlinks)
	Hide       []string    `json:"hide"`       // directories covered by an empty tmpfs
	DataRoot   string      `json:"dataRoot"`   // host directory mounted at /var/lib/docker
	Dockerd    []string    `json:"dockerd"`    // dockerd argv; empty = no docker
	// ComposePlugin is the host's docker compose plugin, bound read-only at
	// composePluginPath; "" = none.
	ComposePlugin string `json:"composePlugin,omitempty"`
}

// The init protocol: the parent reads lines from fd 3 ("mounted", then "ready", or
// "error: …") and writes "net\n" to fd 4 once the network is configured.
const (
	initStatusFd  = 3
	initControlFd = 4
)

// defaultPath is the PATH every process in the sandbox starts with.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// RunInit is the sandbox's PID 1 (the hidden `__init` mode). It runs in fresh mount, PID,
// UTS, IPC and network namespaces: it builds the sandbox's file system view, waits for
// the parent to plumb the network, starts dockerd, then reaps orphans until SIGTERM, when
// it asks every process to stop and exits (the kernel kills whatever is left).
func RunInit(cfgJSON string) int {
	status := os.NewFile(initStatusFd, "status")
	control := os.NewFile(initControlFd, "control")
	fail := func(err error) int {
		fmt.Fprintf(status, "error: %v\n", err)
		fmt.Fprintf(os.Stderr, "sbxsim init: %v\n", err)
		return 1
	}
	var cfg initConfig
	if err := json.Unmarshal([]byte(cfgJSON), &cfg); err != nil {
		return fail(fmt.Errorf("parsing config: %w", err))
	}
	// Ask for SIGCHLD and SIGTERM before any child exists.
	sigs := make(chan os.Signal, 32)
	signal.Notify(sigs, unix.SIGCHLD, unix.SIGTERM, unix.SIGINT, unix.SIGHUP)

	if err := setupMounts(cfg); err != nil {
		return fail(err)
	}
	if err := unix.Sethostname([]byte(cfg.Name)); err != nil {
		return fail(fmt.Errorf("setting hostname: %w", err))
	}
	fmt.Fprintln(status, "mounted")
	line, err := bufio.NewReader(control).ReadString('\n')
	if err != nil || line != "net\n" {
		return fail(fmt.Errorf("parent went away before the network was ready"))
	}
	control.Close()
	dockerd := 0
	if len(cfg.Dockerd) > 0 {
		if dockerd, err = startDockerd(cfg.Dockerd); err != nil {
			return fail(err)
		}
	}
	fmt.Fprintln(status, "ready")
	status.Close()
	return reapUntilSignalled(sigs, dockerd)
}

// setupMounts gives the sandbox its view of the host's root: nothing propagates back to
// the host; fresh /proc and /sys for the new PID and network namespaces, with a cgroup2
// hierarchy for dockerd; the hidden directories covered by empty tmpfs; the workspaces
// and the docker data root bound at their paths.
func setupMounts(cfg initConfig) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making / private: %w", err)
	}
	// Open the bind sources before anything covers them: a workspace may live under a
	// directory that is about to be hidden (/tmp, /root, /home).
	type bind struct {
		fd     int
		target string
		ro     bool
		dir    bool
	}
	var binds []bind
	open := func(src, target string, ro bool) error {
		fd, err := unix.Open(src, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("opening %s: %w", src, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return fmt.Errorf("stat %s: %w", src, err)
		}
		binds = append(binds, bind{fd, target, ro, st.Mode&unix.S_IFMT == unix.S_IFDIR})
		return nil
	}
	for _, w := range cfg.Workspaces {
		if err := open(w.Path, w.Path, w.ReadOnly); err != nil {
			return err
		}
	}
	if cfg.DataRoot != "" {
		if err := open(cfg.DataRoot, "/var/lib/docker", false); err != nil {
			return err
		}
	}
	pluginFd := -1
	if cfg.ComposePlugin != "" {
		fd, err := unix.Open(cfg.ComposePlugin, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("opening the compose plugin %s: %w", cfg.ComposePlugin, err)
		}
		defer unix.Close(fd)
		pluginFd = fd
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting /proc: %w", err)
	}
	if err := unix.Mount("sysfs", "/sys", "sysfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting /sys: %w", err)
	}
	if err := unix.Mount("none", "/sys/fs/cgroup", "cgroup2", 0, ""); err != nil && len(cfg.Dockerd) > 0 {
		return fmt.Errorf("mounting cgroup2 on /sys/fs/cgroup: %w", err)
	}
	for _, d := range cfg.Hide {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() {
			continue // absent, or a symlink into a directory hidden anyway (/var/run)
		}
		mode := "0755"
		if d == "/tmp" {
			mode = "1777"
		}
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode="+mode); err != nil {
			return fmt.Errorf("hiding %s: %w", d, err)
		}
	}
	for _, b := range binds {
		if err := mountpoint(b.target, b.dir); err != nil {
			return err
		}
		src := fmt.Sprintf("/proc/self/fd/%d", b.fd)
		if err := unix.Mount(src, b.target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("binding %s: %w", b.target, err)
		}
		if b.ro {
			if err := unix.Mount("", b.target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
				return fmt.Errorf("making %s read-only: %w", b.target, err)
			}
		}
		unix.Close(b.fd)
	}
	if pluginFd >= 0 {
		if err := graftFile(pluginFd, composePluginPath); err != nil {
			return err
		}
	}
	return nil
}

// mountpoint makes sure target exists to mount on: inside a hidden (tmpfs) directory the
// workspace's path must be recreated.
func mountpoint(target string, dir bool) error {
	if _, err := os.Stat(target); err == nil {
		return nil
	}
	if dir {
		if err := os.MkdirAll(target, 0o755); err != nil {
			return fmt.Errorf("creating mount point %s: %w", target, err)
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return fmt.Errorf("creating mount point %s: %w", target, err)
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("creating mount point %s: %w", target, err)
	}
	return f.Close()
}

// startDockerd starts the sandbox's own dockerd as a child of init, logging to init's
// stderr, and returns its pid. The reaper collects it like any orphan.
func startDockerd(argv []string) (int, error) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer null.Close()
	p, err := os.StartProcess(argv[0], argv, &os.ProcAttr{
		Dir:   "/",
		Env:   []string{"PATH=" + defaultPath, "HOME=/root"},
		Files: []*os.File{null, os.Stderr, os.Stderr},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		return 0, fmt.Errorf("starting dockerd: %w", err)
	}
	pid := p.Pid
	return pid, p.Release()
}

// reapUntilSignalled is init's main loop: reap every exited child; on a termination
// signal, give dockerd (if any) three seconds to stop its containers — it alone is
// signalled first, since it needs its containerd to do so — then exit, which makes the
// kernel SIGKILL whatever is left in the namespace.
func reapUntilSignalled(sigs <-chan os.Signal, dockerd int) int {
	dockerdDone := dockerd == 0
	for sig := range sigs {
		if sig == unix.SIGCHLD {
			reap(dockerd, &dockerdDone)
			continue
		}
		if !dockerdDone {
			_ = unix.Kill(dockerd, unix.SIGTERM)
		}
		// dockerd 20.10 lingers ~15 s after its containers are gone; past their
		// --shutdown-timeout nothing is lost by cutting it short.
		deadline := time.After(3 * time.Second)
		for !dockerdDone {
			select {
			case <-deadline:
				return 0
			case <-sigs:
			case <-time.After(20 * time.Millisecond):
			}
			reap(dockerd, &dockerdDone)
		}
		return 0
	}
	return 0
}

// reap collects every exited child without blocking, noting when watch was among them.
func reap(watch int, watchDone *bool) {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
		if pid == watch {
			*watchDone = true
		}
	}
}
