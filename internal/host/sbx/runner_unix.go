//go:build unix

package sbx

import (
	"os/exec"
	"syscall"
)

func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// Kill the whole group: sbx may have started helpers of its own.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
