package e2e

import (
	"errors"
	goexec "os/exec"
)

func command(bin string, env []string, args ...string) *goexec.Cmd {
	cmd := goexec.Command(bin, args...)
	cmd.Env = env
	return cmd
}

func exitCode(err error) int {
	var ee *goexec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func stderrOf(err error) string {
	var ee *goexec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}
