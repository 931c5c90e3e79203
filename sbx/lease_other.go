//go:build !unix

package sbx

import "context"

// Lock is a no-op where flock(2) is missing: a lease taken while another process tears
// the sandbox down may then find it gone (the call fails closed, or warm re-use makes
// it again).
func (l *Leases) Lock(_ context.Context, name string) (unlock func(), err error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	return func() {}, nil
}
