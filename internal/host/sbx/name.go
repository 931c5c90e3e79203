package sbx

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"regexp"
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.-]*[A-Za-z0-9]$`)

// ErrBadName is returned for a sandbox name sbx would reject.
var ErrBadName = errors.New("invalid sandbox name")

// ValidateName checks sbx's name rules: 2–63 ASCII letters, digits, '-' and '.',
// starting and ending with a letter or digit; "default" is reserved.
func ValidateName(name string) error {
	if len(name) < 2 || len(name) > 63 || !nameRE.MatchString(name) || name == "default" {
		return fmt.Errorf("%w %q: want 2-63 characters of [A-Za-z0-9.-], alphanumeric at both ends", ErrBadName, name)
	}
	return nil
}

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
