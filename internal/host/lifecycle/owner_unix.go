//go:build unix

package lifecycle

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// processAlive asks the kernel with signal 0: ESRCH means no such process. A zombie
// (Linux: state Z or X in /proc/PID/stat) has exited too, only nobody reaped it yet — as
// when its parent died first and the init of a container does not reap orphans.
func processAlive(pid int) alive {
	if pid <= 0 {
		return aliveNo
	}
	err := syscall.Kill(pid, 0)
	switch {
	case err == nil && zombie(pid):
		return aliveNo
	case err == nil, errors.Is(err, syscall.EPERM):
		return aliveYes
	case errors.Is(err, syscall.ESRCH):
		return aliveNo
	}
	return aliveUnknown
}

// zombie reports whether pid has exited but not been reaped (Linux).
func zombie(pid int) bool {
	f := statFields(pid)
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
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
	f := statFields(pid)
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// statFields are the fields of /proc/PID/stat after the command name, from field 3 (the
// state) on; nil where there is no such file.
func statFields(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	// The command name (field 2) may contain spaces; fields after its ')' are plain.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}
