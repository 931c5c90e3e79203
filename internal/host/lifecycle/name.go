package lifecycle

import (
	"crypto/rand"
	"fmt"
	"io"
)

// SessionName returns a per-process name pi-sbx-<pid>-<random>, the random part read
// from r (crypto/rand when nil).
func SessionName(pid int, r io.Reader) (string, error) {
	if r == nil {
		r = rand.Reader
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 6)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", fmt.Errorf("making a sandbox name: %w", err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return fmt.Sprintf("pi-sbx-%d-%s", pid, b), nil
}
