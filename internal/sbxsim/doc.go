//go:build linux

// Package sbxsim is a Linux simulator of the Docker Sandboxes `sbx` CLI, for end-to-end
// tests on machines without a microVM host.
//
// Each sandbox is a set of Linux namespaces (mount, PID, UTS, IPC, network) around a small
// init process (sbxsim's hidden __init mode), with a veth pair to the host in
// 10.213.0.0/16 and a root file system of its own: init pivots into a tmpfs
// holding read-only binds of the host's system directories (/usr, /bin, /sbin, /lib*), a
// private copy of the parts of /etc that programs need (users, hosts, resolver, ld.so,
// CA certificates, alternatives — not shadow, gshadow, ssh host keys or ssl/private),
// empty private /root, /home, /tmp, /run and /var (/var/run a link to /run), /proc of its
// PID namespace with the kernel-wide knobs (/proc/sys but its own network's) read-only,
// read-only /sys, a minimal /dev with its own devpts, and the workspaces bind-mounted at
// their host absolute paths (":ro" enforced); the host's root is then detached. Unless
// SBXSIM_DOCKER=0 it runs its own dockerd on /var/run/docker.sock (data root in the
// state directory) in a cgroup and cgroup namespace of its own (its
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
// Like real sbx (the contract table, internal/host/sbx/contract.go), commands run as agent (UID 1000,
// HOME=/home/agent, groups sudo and docker; -u root for root), and sudo is passwordless:
// a setuid copy of sbxsim bound at /usr/local/bin/sudo (RunSudo), whose root still has
// only the capability bounding set above. Each workspace is an idmapped mount
// whose user namespace swaps agent's id with the workspace owner's: agent owns the
// workspace inside, and what it creates is the owner's on the host (root inside, the
// sandbox's dockerd included, writes as uid 1000 there when the owner is root). Where
// the primary workspace's file system cannot be idmapped (checked on a detached copy
// at each start), create warns and "agent" runs with the workspace owner's ids instead. A
// sandbox stops by itself SBXSIM_AUTOSTOP (default 30 s; "off" only for unit tests)
// after its last exec session ended, and after create, run -d and a publish that
// started it (one detached stopper per sandbox, killed by rm); a stop ends
// every process, while /tmp and /home/agent survive it (kept in the state directory, as
// the VM's disk keeps its root file system). `daemon stop` stops every sandbox and the
// next command prints sandboxd's start-up banner on stdout; `logout` stops them too and
// every sandbox verb then fails with real sbx's "not authenticated" messages (exit 1);
// stop, ports and cp word a missing sandbox "sandbox 'N' not found", the others "no
// sandbox named 'N'"; `ports` of a stopped sandbox prints "No published ports";
// SBXSIM_VERSION (and SBXSIM_SERVER_VERSION) play another sbx version, whose flags
// (sbx.Verbs) are then the only ones accepted; version, daemon status, diagnose and
// settings answer in real sbx's shapes; create --pull is
// recorded (nothing is pulled). With ssh.agentForwardingEnabled (on by default, as in
// sbx) exec sets SSH_AUTH_SOCK=/run/host-services/ssh-auth.sock, where the creator's
// SSH agent socket is bound. create --clone is clone mode: the host's git root
// read-only at /run/sandbox/source, a private clone at the same path on the sandbox's
// storage, its git daemon published as 127.0.0.1:<ephemeral>->9418 (a new port at each
// start, the host remote sandbox-<name> rewritten), refs/sandboxes/<name>/* left after rm;
// rm without --force refuses a clone whose branches hold commits no host ref has.
//
// It is a test double, not a security boundary: the sandbox shares the host's kernel
// (one kernel bug away from the host; no seccomp filter), its root user is the host's
// root user (no user namespace), and the sandbox's dockerd has every capability — a `docker run --privileged` container, or
// any container given CAP_SYS_ADMIN or the host's devices, is not confined by any of
// the above. Network out (egress.go, policy.go): every TCP connection leaving the
// sandbox (and its containers) is redirected to a host-side egress proxy whose socket
// lives in the sandbox's namespace; it applies sbx's network policy (presets, rules,
// org governance: `policy …`, sbx ≥ 0.55), logs each decision, answers a denied HTTP
// request with a 403 and resets other denied TCP; UDP and ICMP out are rejected, so
// names resolve only through SBXSIM_RESOLVE's test hosts. The host's own services on
// 10.213.x.1 stay reachable directly; no other host address is dialled. SBXSIM_HANG
// and SBXSIM_CREATE_DELAY make verbs hang or create slow. Other known differences from
// sbx: ports
// forward TCP only; exec --privileged keeps every capability (as docker exec's does: root can
// mount in the sandbox's mount namespace), which makes the command as unconfined as the
// sandbox's dockerd; --cpus, --memory,
// --template and --kit are validated and recorded but not applied; login and logout
// only flip the signed-in state. Cloud sandboxes (--cloud, cloud*.go) run on this
// machine in a store of their own: no workspace mount, an empty workspace, cp in and
// out, a root file system kept across stops (a VM's disk), sizes, a TTL with its
// on-timeout action (on a clock SBXSIM_CLOUD_TTL_SCALE times faster), the account's
// quota, exec's -d/-u/--privileged refused, a WAN's round trip on every exec stream and
// cp (SBXSIM_CLOUD_RTT), and published ports as https URLs of a test CA
// (SBXSIM_CLOUD_CA); their error wordings are assumed, and their network is not
// governed.
package sbxsim
