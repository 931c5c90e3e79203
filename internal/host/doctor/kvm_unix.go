//go:build unix

package doctor

import (
	"fmt"
	"syscall"
)

// kvmAccess checks /dev/kvm the way the VM monitor opens it: read and write.
func kvmAccess() error {
	const rw = 0x4 | 0x2 // R_OK | W_OK
	if err := syscall.Access("/dev/kvm", rw); err != nil {
		return fmt.Errorf("not readable and writable by this user (%w)", err)
	}
	return nil
}
