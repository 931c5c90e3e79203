//go:build unix

package sbx

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// processAlive asks the kernel with signal 0: ESRCH means no such process.
func processAlive(pid int) alive {
	if pid <= 0 {
		return aliveNo
	}
	err := syscall.Kill(pid, 0)
	switch {
	case err == nil, errors.Is(err, syscall.EPERM):
		return aliveYes
	case errors.Is(err, syscall.ESRCH):
		return aliveNo
	}
	return aliveUnknown
}

// bootID identifies this boot of the host (Linux); "" where it is not known.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// processStart is the start time of pid in clock ticks since boot (Linux /proc/PID/stat
// field 22), which tells a reused pid from the original; "" where it is not known.
func processStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name (field 2) may contain spaces; fields after its ')' are plain.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}
