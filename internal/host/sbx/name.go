package sbx

import (
	"errors"
	"fmt"
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
