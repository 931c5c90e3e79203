package fsops

import "syscall"

// syscallUmask sets the process umask for a test and returns the previous one.
func syscallUmask(mask int) int { return syscall.Umask(mask) }
