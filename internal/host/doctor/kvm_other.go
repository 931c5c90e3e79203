//go:build !unix

package doctor

import "errors"

func kvmAccess() error { return errors.New("no /dev/kvm on this platform") }
