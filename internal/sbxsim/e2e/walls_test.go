//go:build e2e

package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Capability numbers (linux/capability.h) that an exec'd command must not have: each
// would let root inside undo the sandbox or reach the host.
var forbiddenCaps = map[string]uint{
	"CAP_DAC_READ_SEARCH": 2,  // open_by_handle_at on the host's file systems
	"CAP_NET_ADMIN":       12, // the sandbox's network set-up
	"CAP_SYS_MODULE":      16, // kernel modules
	"CAP_SYS_RAWIO":       17, // /dev/mem, ioperm
	"CAP_SYS_PTRACE":      19, // the sandbox's init and dockerd, which keep every capability
	"CAP_SYS_ADMIN":       21, // mount, umount, setns, pivot_root
	"CAP_SYS_BOOT":        22,
	"CAP_MKNOD":           27, // device nodes of the host's disks
}

// TestExecCannotUndoTheWalls: root in the sandbox cannot unmount or mount anything (the
// walls are mounts), and its commands — and theirs — have none of the capabilities
// that would let them.
func TestExecCannotUndoTheWalls(t *testing.T) {
	s := newSim(t, false)
	name := s.create("walls", t.TempDir())
	for _, cmd := range []string{
		"umount /root", "umount -l /root", "umount /run", "umount -l /", "umount /proc/sys",
		"mount -t tmpfs none /mnt", "mount --bind / /mnt", "mount -o remount,rw /usr",
	} {
		// As root (-u root), and as agent through its passwordless sudo.
		for _, as := range [][]string{{"-u", "root", name, "sh", "-c", cmd}, {name, "sudo", "sh", "-c", cmd}} {
			if r := s.run(append([]string{"exec"}, as...)...); r.code == 0 {
				t.Errorf("%q succeeded inside the sandbox: %s", cmd, r)
			}
		}
	}
	for _, who := range [][]string{{}, {"-u", "root"}, {"-u", "nobody"}} {
		args := append(append([]string{"exec"}, who...), name, "sh", "-c", "sh -c 'grep -E \"^Cap(Eff|Prm|Bnd|Amb):\" /proc/self/status'")
		out := s.must(args...)
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			field, hex, _ := strings.Cut(line, ":")
			mask, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
			if err != nil {
				t.Fatalf("%v: %q: %v", who, line, err)
			}
			for cap, bit := range forbiddenCaps {
				if mask&(1<<bit) != 0 {
					t.Errorf("exec %v: %s has %s (%s)", who, field, cap, line)
				}
			}
		}
	}
}

// TestSandboxHasItsOwnRoot: the sandbox's / is its own: files in the host's /, /root,
// /home and /etc are not there, nor the host's shadow files or ssh host keys; the
// host's programs are there, read-only; writes to the private /etc stay inside; the
// kernel's global settings in /proc/sys and /sys are read-only.
func TestSandboxHasItsOwnRoot(t *testing.T) {
	s := newSim(t, false)
	ws := t.TempDir()
	name := s.create("root", ws)
	marker := "sbxsim-e2e-marker-" + name
	var planted []string
	for _, dir := range []string{"/", "/root", "/home", "/etc"} {
		p := filepath.Join(dir, marker)
		if err := os.WriteFile(p, []byte("host secret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(p) })
		planted = append(planted, p)
	}
	for _, p := range append(planted, "/etc/shadow", "/etc/gshadow", "/etc/ssh", "/etc/ssl/private", "/etc/docker/daemon.json", s.state) {
		if r := s.run("exec", name, "test", "-e", p); r.code != 1 {
			t.Errorf("%s exists inside the sandbox (test -e: %s)", p, r)
		}
	}
	if got := s.must("exec", name, "ls", "-A", "/"); strings.Contains(got, marker) {
		t.Errorf("the host's / shows inside: %q", got)
	}
	if shadow, err := os.ReadFile("/etc/shadow"); err == nil && len(shadow) > 0 {
		got := s.run("exec", "-u", "root", name, "sh", "-c", "cat /etc/shadow /etc/gshadow /etc/shadow- 2>/dev/null")
		first, _, _ := bytes.Cut(shadow, []byte("\n"))
		if strings.Contains(got.stdout, string(first)) {
			t.Errorf("host /etc/shadow content readable inside: %q", first)
		}
	}

	// The host's programs run; /usr and the rest of the system directories are read-only.
	if got := s.must("exec", name, "sh", "-c", "echo runs; ls /usr/bin/sh /bin/sh >/dev/null && echo found"); got != "runs\nfound\n" {
		t.Errorf("host programs inside: %q", got)
	}
	for _, p := range []string{"/usr/" + marker, "/usr/bin/" + marker, "/bin/" + marker, "/lib/" + marker} {
		if r := s.run("exec", "-u", "root", name, "touch", p); r.code == 0 || !strings.Contains(r.stderr, "Read-only") {
			t.Errorf("touch %s inside: %s; want a read-only file system", p, r)
		}
		os.Remove(p) // in case it reached the host
	}
	// /etc is a private copy: what the sandbox writes there stays there. (Only a new
	// file is written: were /etc the host's, nothing of the host's must change.)
	s.must("exec", "-u", "root", name, "sh", "-c", "echo probe > /etc/"+marker+".new && grep -q '^root:' /etc/passwd")
	t.Cleanup(func() { os.Remove("/etc/" + marker + ".new") })
	if _, err := os.Stat("/etc/" + marker + ".new"); err == nil {
		t.Error("a file written in the sandbox's /etc appeared in the host's")
	}
	// Kernel-wide knobs: rewriting a value with itself is refused (and harmless if not).
	for _, p := range []string{"/proc/sys/kernel/core_pattern", "/sys/kernel/rcu_expedited"} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if r := s.run("exec", "-u", "root", name, "sh", "-c", "v=$(cat "+p+") && echo \"$v\" > "+p); r.code == 0 {
			t.Errorf("%s is writable inside the sandbox: %s", p, r)
		}
	}
	// What the sandbox needs still works: its workspace, /tmp, /var/tmp, a home.
	s.must("exec", name, "sh", "-c", "echo ok > "+filepath.Join(ws, "w")+" && echo ok > /tmp/t && echo ok > /var/tmp/t && echo ok > ~/h && test -L /var/run")
	if b, err := os.ReadFile(filepath.Join(ws, "w")); err != nil || string(b) != "ok\n" {
		t.Errorf("workspace write: %q, %v", b, err)
	}
}
