//go:build !unix

package sbx

import "os/exec"

func setProcessGroup(*exec.Cmd) {}
