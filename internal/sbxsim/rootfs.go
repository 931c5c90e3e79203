//go:build linux

package sbxsim

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// systemDirs are the host's top-level directories a sandbox sees, read-only (or as the
// same symlinks, on a merged-/usr system): programs and libraries, nothing else.
var systemDirs = []string{"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"}

// etcEntries (file patterns) are what the sandbox's private /etc copies from the host's:
// what programs need to resolve users, hosts and libraries, to verify TLS, to pick the
// iptables variant (dockerd), to start a shell, and the configuration of language
// runtimes in /usr that read theirs from /etc. Never the host's secrets: no shadow,
// gshadow, ssh host keys, ssl/private, sudoers, docker or containerd configuration.
var etcEntries = []string{
	"passwd", "group", "resolv.conf", "nsswitch.conf", "host.conf", "gai.conf", "networks",
	"protocols", "services", "ethertypes", "rpc", "ld.so.cache", "ld.so.conf", "ld.so.conf.d",
	"ssl/certs", "ssl/openssl.cnf", "ca-certificates", "ca-certificates.conf", "alternatives",
	"localtime", "timezone", "os-release", "debian_version", "issue", "shells", "profile",
	"profile.d", "bash.bashrc", "environment", "inputrc", "login.defs", "terminfo", "skel",
	"mime.types", "magic", "magic.mime", "xattr.conf", "iproute2", "locale.alias", "wgetrc",
	"adduser.conf", "deluser.conf", "perl", "python3*", "java-*",
}

// procReadOnly are the parts of the PID namespace's /proc that act on the whole kernel,
// made read-only as Docker does for containers (sysctls, the SysRq trigger, IRQ and bus
// settings); /proc/sys/net is then bound writable again, since it belongs to the
// sandbox's own network namespace and its dockerd sets forwarding there.
var procReadOnly = []string{"sys", "sysrq-trigger", "irq", "bus", "fs", "acpi", "asound"}

// devNodes are the host device nodes a sandbox's /dev holds.
var devNodes = []string{"null", "zero", "full", "random", "urandom", "tty"}

// buildRoot assembles the sandbox's root file system in a tmpfs mounted on dir and
// pivots into it: read-only binds of the host's system directories, a private /etc
// without the host's secrets, empty private /root, /home, /tmp, /run and /var (with
// /var/run a link to /run), /proc of the sandbox's PID namespace, read-only /sys (init
// mounts its own cgroup2 there for dockerd, cgroup.go), a minimal /dev, then the hidden directories, the
// workspaces at their host paths, the docker data root and the compose plugin. The host's
// root is detached at the end: nothing else of it is reachable from inside.
func buildRoot(dir string, cfg initConfig) error {
	if cfg.Disk != "" {
		if err := mountDisk(cfg.Disk, dir); err != nil {
			return err
		}
	} else if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("mounting the sandbox root: %w", err)
	}
	in := func(p string) string { return filepath.Join(dir, p) }
	for _, d := range systemDirs {
		host := "/" + d
		fi, err := os.Lstat(host)
		if err != nil {
			continue
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			l, err := os.Readlink(host)
			if err != nil {
				return err
			}
			if err := os.Symlink(l, in(d)); err != nil && !errors.Is(err, os.ErrExist) { // a disk's
				return err
			}
			continue
		}
		if err := bindPath(host, in(d), true); err != nil {
			return err
		}
	}
	if err := buildEtc(in("etc"), cfg.Name, cfg.Hosts); err != nil {
		return err
	}
	if err := addAgentUser(in("etc")); err != nil {
		return err
	}
	for _, d := range []struct {
		path string
		mode os.FileMode
	}{{"root", 0o700}, {"home", 0o755}, {"tmp", 0o777 | os.ModeSticky}, {"run", 0o755},
		{"var", 0o755}, {"var/tmp", 0o777 | os.ModeSticky}, {"var/lib", 0o755}, {"var/cache", 0o755},
		{"var/log", 0o755}, {"var/spool", 0o755}, {"proc", 0o555}, {"sys", 0o555}, {"dev", 0o755},
		{"mnt", 0o755}, {"opt", 0o755}, {"srv", 0o755}} {
		if err := os.Mkdir(in(d.path), d.mode); err != nil && !errors.Is(err, os.ErrExist) { // a disk's
			return fmt.Errorf("creating /%s: %w", d.path, err)
		}
		if err := os.Chmod(in(d.path), d.mode); err != nil { // past the umask
			return err
		}
	}
	if err := os.Symlink("../run", in("var/run")); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if cfg.SSHAgent != "" {
		if err := bindPath(cfg.SSHAgent, in(sshAgentPath), false); err != nil {
			fmt.Fprintf(os.Stderr, "sbxsim init: WARN: forwarding the SSH agent: %v\n", err)
		}
	}
	// The VM's disk keeps /tmp and agent's home across a stop (see persistentDirs).
	for _, d := range []struct{ host, inside string }{{cfg.Tmp, "tmp"}, {cfg.Home, "home/agent"}} {
		if d.host == "" {
			continue
		}
		if err := bindPath(d.host, in(d.inside), false); err != nil {
			return err
		}
	}
	if err := mountProc(in("proc")); err != nil {
		return err
	}
	if err := unix.Mount("sysfs", in("sys"), "sysfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting /sys: %w", err)
	}
	if err := buildDev(in("dev")); err != nil {
		return err
	}
	for _, d := range cfg.Hide {
		fi, err := os.Lstat(in(d))
		if err != nil || !fi.IsDir() {
			continue // not in the sandbox's root anyway
		}
		if err := unix.Mount("tmpfs", in(d), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
			return fmt.Errorf("hiding %s: %w", d, err)
		}
	}
	for i, w := range cfg.Workspaces {
		src := w.Path
		if w.From != "" {
			src = w.From
		}
		if i < len(cfg.Userns) && cfg.Userns[i] > 0 {
			err := bindIdmapped(src, in(w.Path), cfg.Userns[i], w.ReadOnly)
			if err == nil {
				continue
			}
			// A file system without idmapped mounts: agent then writes only where the
			// host's permissions let uid 1000.
			fmt.Fprintf(os.Stderr, "sbxsim init: WARN: %v; %s is bound without an idmap\n", err, w.Path)
		}
		if err := bindPath(src, in(w.Path), w.ReadOnly); err != nil {
			return err
		}
	}
	if cfg.DataRoot != "" {
		if err := bindPath(cfg.DataRoot, in("var/lib/docker"), false); err != nil {
			return err
		}
	}
	if cfg.ComposePlugin != "" {
		fd, err := unix.Open(cfg.ComposePlugin, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("opening the compose plugin %s: %w", cfg.ComposePlugin, err)
		}
		err = graftFile(fd, in(composePluginPath))
		unix.Close(fd)
		if err != nil {
			return err
		}
	}
	if cfg.Sudo != "" {
		fd, err := unix.Open(cfg.Sudo, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("opening the sudo shim %s: %w", cfg.Sudo, err)
		}
		err = graftFile(fd, in(sudoPath))
		unix.Close(fd)
		if err != nil {
			return err
		}
	}
	return pivotInto(dir)
}

// mountDisk binds a cloud sandbox's disk (a host directory that outlives its starts, as
// a VM's disk does) as the root instead of a tmpfs, so that whatever the sandbox wrote
// anywhere survives a stop. /etc is made again at each start.
func mountDisk(disk, dir string) error {
	if err := os.MkdirAll(disk, 0o755); err != nil {
		return fmt.Errorf("making the sandbox disk: %w", err)
	}
	if err := os.Chmod(disk, 0o755); err != nil {
		return fmt.Errorf("making the sandbox disk: %w", err)
	}
	if err := os.RemoveAll(filepath.Join(disk, "etc")); err != nil {
		return fmt.Errorf("clearing the sandbox disk's /etc: %w", err)
	}
	if err := unix.Mount(disk, dir, "", unix.MS_BIND|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("mounting the sandbox disk: %w", err)
	}
	// nosuid, nodev, as the tmpfs root has.
	if err := unix.Mount("", dir, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return fmt.Errorf("mounting the sandbox disk: %w", err)
	}
	return nil
}

// bindPath binds the host's src onto target inside the new root, creating the mount
// point (and its parents, in the root's tmpfs) as needed.
func bindPath(src, target string, ro bool) error {
	fi, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("binding %s: %w", src, err)
	}
	if err := mountpoint(target, fi.IsDir()); err != nil {
		return err
	}
	fd, err := unix.Open(src, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening %s: %w", src, err)
	}
	defer unix.Close(fd)
	return bindFd(fd, target, ro)
}

// buildEtc fills the private /etc: copies (not binds: what the sandbox changes stays
// there) of etcEntries that the host has, the sandbox's own hostname and hosts, and
// mtab as the kernel's mount table.
func buildEtc(etc, hostname string, extraHosts []string) error {
	if err := os.Mkdir(etc, 0o755); err != nil {
		return err
	}
	for _, pattern := range etcEntries {
		matches, _ := filepath.Glob(filepath.Join("/etc", pattern)) // only ErrBadPattern
		for _, src := range matches {
			rel := src[len("/etc/"):]
			if err := os.MkdirAll(filepath.Dir(filepath.Join(etc, rel)), 0o755); err != nil {
				return err
			}
			if err := copyTree(src, filepath.Join(etc, rel)); err != nil {
				return fmt.Errorf("copying /etc/%s: %w", rel, err)
			}
		}
	}
	hosts := fmt.Sprintf("127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\tlocalhost ip6-localhost ip6-loopback\n", hostname)
	for _, h := range extraHosts {
		hosts += h + "\n"
	}
	for name, body := range map[string]string{"hostname": hostname + "\n", "hosts": hosts} {
		if err := os.WriteFile(filepath.Join(etc, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return os.Symlink("../proc/self/mounts", filepath.Join(etc, "mtab"))
}

// copyTree copies a file, symlink or directory tree, keeping modes and symlinks as they
// are; special files are skipped.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&os.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, to)
		case d.IsDir():
			if err := os.Mkdir(to, fi.Mode().Perm()); err != nil && !errors.Is(err, os.ErrExist) {
				return err
			}
			return os.Chmod(to, fi.Mode().Perm())
		case d.Type().IsRegular():
			return copyFile(p, to, fi.Mode().Perm())
		}
		return nil
	})
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, mode)
}

// mountProc mounts the PID namespace's /proc with its kernel-wide knobs read-only.
func mountProc(proc string) error {
	if err := unix.Mount("proc", proc, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting /proc: %w", err)
	}
	for _, p := range procReadOnly {
		target := filepath.Join(proc, p)
		if _, err := os.Stat(target); err != nil {
			continue
		}
		if err := unix.Mount(target, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("binding /proc/%s: %w", p, err)
		}
		if err := readOnly(target); err != nil {
			return err
		}
	}
	net := filepath.Join(proc, "sys", "net")
	if err := unix.Mount(net, net, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("binding /proc/sys/net: %w", err)
	}
	attr := &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(unix.AT_FDCWD, net, 0, attr); err != nil {
		return fmt.Errorf("making /proc/sys/net writable: %w", err)
	}
	return nil
}

// buildDev makes a minimal /dev: a few host device nodes, a private devpts instance,
// /dev/shm, and the usual links.
func buildDev(dev string) error {
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755"); err != nil {
		return fmt.Errorf("mounting /dev: %w", err)
	}
	for _, n := range devNodes {
		if _, err := os.Stat("/dev/" + n); err != nil {
			continue
		}
		if err := bindPath("/dev/"+n, filepath.Join(dev, n), false); err != nil {
			return err
		}
	}
	for _, d := range []string{"pts", "shm"} {
		if err := os.Mkdir(filepath.Join(dev, d), 0o755); err != nil {
			return err
		}
	}
	if err := unix.Mount("devpts", filepath.Join(dev, "pts"), "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("mounting /dev/pts: %w", err)
	}
	if err := unix.Mount("shm", filepath.Join(dev, "shm"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		return fmt.Errorf("mounting /dev/shm: %w", err)
	}
	for l, target := range map[string]string{"ptmx": "pts/ptmx", "fd": "/proc/self/fd",
		"stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, filepath.Join(dev, l)); err != nil {
			return err
		}
	}
	return nil
}

// pivotInto makes dir the root and detaches the old one (the host's) entirely.
func pivotInto(dir string) error {
	if err := unix.Chdir(dir); err != nil {
		return err
	}
	// pivot_root(".", ".") stacks the old root on the new one; unmounting "." then
	// takes it away, with no directory needed to park it in.
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detaching the host's root: %w", err)
	}
	return unix.Chdir("/")
}
