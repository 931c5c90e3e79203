package lifecycle

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
)

// ProjectName is the sandbox of a workspace kept between sessions
// (DOCKER_SANDBOX_REUSE=1): pi-sbx-<basename>-<hash>, the basename reduced to sbx's name
// characters and the hash the first 8 hex digits of SHA-256 of the absolute path, so two
// projects of one name get two sandboxes and one project always the same. It never looks
// like a session name (pi-sbx-<pid>-<6 random>): the suffix is 8 hex digits.
func ProjectName(workspace string) string {
	abs := filepath.Clean(workspace)
	sum := sha256.Sum256([]byte(abs))
	hash := hex.EncodeToString(sum[:4])
	const prefix, maxBase = "pi-sbx-", 63 - len("pi-sbx-") - 1 - 8
	var b strings.Builder
	for _, r := range filepath.Base(abs) {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	base := b.String()
	if len(base) > maxBase {
		base = base[:maxBase]
	}
	// The name's parts join with '-', so dots and dashes at the ends of the base go.
	base = strings.Trim(base, ".-")
	if base == "" {
		return prefix + hash
	}
	return prefix + base + "-" + hash
}
