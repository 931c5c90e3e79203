package lifecycle

// The parts of Windows' process liveness (owner_windows.go) that are plain arithmetic,
// here so that they are tested on every host.

// stillActive is the exit code GetExitCodeProcess reports for a process still running
// (STILL_ACTIVE).
const stillActive = 259

// exitCodeAlive tells from GetExitCodeProcess's answer whether the process runs.
func exitCodeAlive(code uint32) alive {
	if code == stillActive {
		return aliveYes
	}
	return aliveNo
}

// filetimeTicks joins a FILETIME's halves into its 100 ns ticks.
func filetimeTicks(high, low uint32) uint64 { return uint64(high)<<32 | uint64(low) }
