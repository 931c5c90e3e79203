//go:build windows

package lifecycle

import (
	"errors"
	"strconv"

	"golang.org/x/sys/windows"
)

// processAlive opens pid for querying: no such process is ERROR_INVALID_PARAMETER, one
// we may not open exists; an opened one has exited unless its exit code is STILL_ACTIVE
// (a process that exits with 259 itself reads as running: it only keeps a lease a while,
// and its start time still tells it from a later process with its pid).
func processAlive(pid int) alive {
	if pid <= 0 {
		return aliveNo
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	switch {
	case errors.Is(err, windows.ERROR_INVALID_PARAMETER):
		return aliveNo
	case errors.Is(err, windows.ERROR_ACCESS_DENIED):
		return aliveYes
	case err != nil:
		return aliveUnknown
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return aliveUnknown
	}
	return exitCodeAlive(code)
}

// processStart is pid's creation time (100 ns units since 1601, GetProcessTimes), which
// tells a reused pid from the original; "" where it is not known. It is absolute, so it
// also tells a process of an earlier boot: Windows needs no bootID.
func processStart(pid int) string {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return ""
	}
	defer windows.CloseHandle(h)
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return ""
	}
	return strconv.FormatUint(filetimeTicks(created.HighDateTime, created.LowDateTime), 10)
}

// bootID is unknown on Windows; processStart's absolute times make it unneeded.
func bootID() string { return "" }
