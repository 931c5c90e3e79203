//go:build !linux

package shell

import "syscall"

// spawnAttr puts a spawned command in a session of its own.
func spawnAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}
