//go:build !unix

package sbx

// On hosts without kill(2) semantics liveness is unknown: GC then keeps every sandbox.
func processAlive(int) alive  { return aliveUnknown }
func bootID() string          { return "" }
func processStart(int) string { return "" }
