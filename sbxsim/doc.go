// Package sbxsim is a Linux simulator of the Docker Sandboxes `sbx` CLI, for end-to-end
// tests on machines without a microVM host.
//
// Each sandbox is a set of Linux namespaces (mount, PID, UTS, IPC, network) around a small
// init process, with a veth pair to the host, the workspaces bind-mounted at their host
// absolute paths, the host's home directories and /run hidden, and (unless SBXSIM_DOCKER=0)
// its own dockerd. The command line, messages and exit codes follow sbx as described in
// the project's reference notes. It is a test double, not a security boundary: the
// sandbox shares the host kernel and, apart from the hidden directories, its root file
// system.
package sbxsim
