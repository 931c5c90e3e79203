//go:build linux

package sbxsim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
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
	Root       string      `json:"root"`       // empty host directory to build the root on
	DataRoot   string      `json:"dataRoot"`   // host directory mounted at /var/lib/docker
	Dockerd    []string    `json:"dockerd"`    // dockerd argv; empty = no docker
	// ComposePlugin is the host's docker compose plugin, bound read-only at
	// composePluginPath; "" = none.
	ComposePlugin string `json:"composePlugin,omitempty"`
	// Userns are, per workspace, the descriptor of the user namespace its mount is
	// idmapped through (see swapMap), 0 for a plain bind.
	Userns []int `json:"userns,omitempty"`
	// Home and Tmp are the sandbox's persistent /home/agent and /tmp on the host (they
	// survive a stop, as the VM's disk does); Sudo is the setuid sudo shim bound at
	// sudoPath.
	Home string `json:"home"`
	// SSHAgent is the host socket bound at sshAgentPath ("" = none).
	SSHAgent string `json:"sshAgent,omitempty"`
	Tmp      string `json:"tmp"`
	// Hosts are extra /etc/hosts lines (SBXSIM_RESOLVE's test hosts).
	Hosts []string `json:"hosts,omitempty"`
	Sudo  string   `json:"sudo"`
	// Disk, for a cloud sandbox, is the host directory that is its root file system
	// (kept across stops, as a VM's disk); "" = a tmpfs.
	Disk string `json:"disk,omitempty"`
}

// The init protocol: the parent reads lines from fd 3 ("mounted", then "ready", or
// "error: …") and writes "net\n" to fd 4 once the network is configured.
const (
	initStatusFd  = 3
	initControlFd = 4
	// initUsernsFd is the first of the workspaces' user namespaces (initConfig.Userns).
	initUsernsFd = 5
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
		// The parent has put init in the sandbox's cgroup by now. The cgroup namespace
		// is this thread's until dockerd, started from it, inherits it.
		runtime.LockOSThread()
		if err := enterOwnCgroupNamespace(); err != nil {
			return fail(err)
		}
		if dockerd, err = startDockerd(cfg.Dockerd); err != nil {
			return fail(err)
		}
	}
	fmt.Fprintln(status, "ready")
	status.Close()
	return reapUntilSignalled(sigs, dockerd)
}

// setupMounts gives the sandbox its own root (buildRoot): nothing propagates back to
// the host, and the host's root is gone from the sandbox's mount namespace.
func setupMounts(cfg initConfig) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making / private: %w", err)
	}
	return buildRoot(cfg.Root, cfg)
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
