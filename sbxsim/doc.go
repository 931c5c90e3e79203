// Package sbxsim is a Linux simulator of the Docker Sandboxes `sbx` CLI, for end-to-end
// tests on machines without a microVM host.
//
// Each sandbox is a set of Linux namespaces (mount, PID, UTS, IPC, network) around a small
// init process (sbxsim's hidden __init mode), with a veth pair to the host in
// 10.213.0.0/16, the workspaces bind-mounted at their host absolute paths (":ro"
// enforced), a private /tmp, the host's /root, /home, /run and /var/run hidden, and
// (unless SBXSIM_DOCKER=0) its own dockerd on /var/run/docker.sock with a busybox base
// image and the docker compose v2 CLI plugin, bound read-only at
// /usr/libexec/docker/cli-plugins/docker-compose. The plugin is found at create:
// $SBXSIM_COMPOSE_PLUGIN ("none": no plugin), else docker-compose beside the sbxsim
// executable, else ../.cache/compose/<ComposeVersion>/docker-compose from it (where
// scripts/setup.sh builds it, for a binary in the repository's bin/). The command line, messages and exit codes follow sbx as described in the
// project's reference notes; state lives in SBXSIM_STATE (default /var/lib/sbxsim).
//
// It is a test double, not a security boundary: the sandbox shares the host's kernel
// and, apart from the hidden directories, its root file system, and runs as root.
// Other known differences from sbx: commands run as root rather than the `agent` user
// (HOME=/root, also the workdir of a mountless sandbox); the veth reaches only the host
// (no outbound network, but the host's own services on 10.213.x.1 are reachable); no
// auto-stop after create; ports forward TCP only; --cpus, --memory, --template and
// --kit are validated and recorded but not applied.
package sbxsim
