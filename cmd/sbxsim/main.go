//go:build linux

// Command sbxsim is a Linux simulator of the Docker Sandboxes CLI (`sbx`) for tests:
// sandboxes are namespaces with their own dockerd, not microVMs. See package sbxsim.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pi-sbx/pi-sbx-backend/internal/sbxsim"
)

func main() {
	if filepath.Base(os.Args[0]) == "sudo" {
		// The sandbox's sudo is this program, setuid root (see sbxsim.RunSudo).
		os.Exit(sbxsim.RunSudo(os.Args[1:], os.Environ(), os.Stderr))
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ERROR: locating sbxsim: %v\n", err)
		os.Exit(1)
	}
	cwd, _ := os.Getwd()
	os.Exit(sbxsim.Main(context.Background(), os.Args[1:], sbxsim.Env{
		Stdin:     os.Stdin,
		Stdout:    os.Stdout,
		Stderr:    os.Stderr,
		LookupEnv: os.LookupEnv,
		Cwd:       cwd,
		Self:      self,
	}))
}
