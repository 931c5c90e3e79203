// Package sbxsim is a Linux simulator of the Docker Sandboxes `sbx` CLI, for end-to-end
// tests on machines without a microVM host.
//
// Each sandbox is a set of Linux namespaces (mount, PID, UTS, IPC, network) around a small
// init process (sbxsim's hidden __init mode), with a veth pair to the host in
// 10.213.0.0/16 and a root file system of its own (rootfs.go): init pivots into a tmpfs
// holding read-only binds of the host's system directories (/usr, /bin, /sbin, /lib*), a
// private copy of the parts of /etc that programs need (users, hosts, resolver, ld.so,
// CA certificates, alternatives — not shadow, gshadow, ssh host keys or ssl/private),
// empty private /root, /home, /tmp, /run and /var (/var/run a link to /run), /proc of its
// PID namespace with the kernel-wide knobs (/proc/sys but its own network's) read-only,
// read-only /sys, a minimal /dev with its own devpts, and the workspaces bind-mounted at
// their host absolute paths (":ro" enforced); the host's root is then detached. Unless
// SBXSIM_DOCKER=0 it runs its own dockerd on /var/run/docker.sock (data root in the
// state directory) in a cgroup and cgroup namespace of its own (cgroup.go: its
// /sys/fs/cgroup shows that subtree only) with a busybox base image and the
// docker compose v2 CLI plugin, bound read-only at
// /usr/libexec/docker/cli-plugins/docker-compose. The plugin is found at create:
// $SBXSIM_COMPOSE_PLUGIN ("none": no plugin), else docker-compose beside the sbxsim
// executable, else ../.cache/compose/<ComposeVersion>/docker-compose from it (where
// scripts/setup.sh builds it, for a binary in the repository's bin/).
//
// Commands started by exec run through setpriv with the capability bounding set cut to
// Docker's default for containers minus mknod (keptCaps): no CAP_SYS_ADMIN to unmount
// or mount, no CAP_SYS_PTRACE to reach init or dockerd (which keep every capability),
// no CAP_SYS_MODULE, CAP_SYS_RAWIO, CAP_DAC_READ_SEARCH, CAP_NET_ADMIN.
//
// The command line, messages and exit codes follow sbx as described in the project's
// reference notes; state lives in SBXSIM_STATE (default /var/lib/sbxsim).
//
// It is a test double, not a security boundary: the sandbox shares the host's kernel
// (one kernel bug away from the host; no seccomp filter), its root user is the host's
// root user (no user namespace), and the sandbox's dockerd has every capability — a `docker run --privileged` container, or
// any container given CAP_SYS_ADMIN or the host's devices, is not confined by any of
// the above. Other known differences from sbx: commands run as root rather than the
// `agent` user (HOME=/root, also the workdir of a mountless sandbox); the veth reaches
// only the host (no outbound network, but the host's own services on 10.213.x.1 are
// reachable); no auto-stop after create; ports forward TCP only; exec --privileged is
// accepted and ignored; --cpus, --memory, --template and --kit are validated and
// recorded but not applied.
package sbxsim
