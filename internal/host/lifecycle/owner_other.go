//go:build !unix && !windows

package lifecycle

// On hosts with neither kill(2) nor OpenProcess liveness is unknown: GC then keeps every
// sandbox, and a lease always counts.
func processAlive(int) alive  { return aliveUnknown }
func bootID() string          { return "" }
func processStart(int) string { return "" }
