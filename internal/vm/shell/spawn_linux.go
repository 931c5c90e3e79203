package shell

import "syscall"

// spawnAttr puts a spawned command in a session of its own and has the kernel kill it
// when its parent (the agent) dies.
func spawnAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}
