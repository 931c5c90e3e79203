package shell

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// shellPath picks the shell as pi does on Unix: /bin/bash if it exists, else bash on
// PATH, else sh.
func shellPath() string {
	if unix.Access("/bin/bash", unix.F_OK) == nil {
		return "/bin/bash"
	}
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "sh"
}

// killGroup sends SIGKILL to the process group led by pid (the command and everything
// it started that did not leave the group), falling back to the process itself. Only
// for a process not yet reaped: a reaped pid may already be another process's.
func killGroup(pid int) {
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		_ = syscall.Kill(pid, syscall.SIGKILL) // already gone is fine
	}
}

// killSessionGroup sends SIGKILL to the process group of pid, the leader of a session of
// its own (bash's shell): that reaches the shell while it runs and, once it has been
// reaped, what is left of its group — the kernel does not reuse the number while the
// group has members. It never falls back to the pid alone, which after the reap may be
// another process's.
func killSessionGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL) // nothing left is fine
}

// exitCode is the shell convention for a finished process: its exit status, or 128 + n
// for a death by signal n. ok is false when the state carries neither.
func exitCode(ps *os.ProcessState) (code int, ok bool) {
	ws, isWS := ps.Sys().(syscall.WaitStatus)
	switch {
	case !isWS:
		return ps.ExitCode(), ps.Exited()
	case ws.Exited():
		return ws.ExitStatus(), true
	case ws.Signaled():
		return 128 + int(ws.Signal()), true
	}
	return 0, false
}
