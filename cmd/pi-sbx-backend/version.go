package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/agentbin"
)

// commit is set by release builds (-ldflags "-X main.commit=…"); other builds read
// Go's own VCS stamp, when there is one.
var commit = ""

func versionCommand() command {
	return command{name: "version", summary: "print the version, commit, Go version and agents",
		help: "Prints the version of this build, its commit, the Go version it was built with, and the SHA-256 " +
			"of each linux agent it installs into VMs (and where it comes from), one per line. The first line is " +
			"`pi-sbx-backend VERSION`.",
		flags: func(*flag.FlagSet) {},
		run: func(_ context.Context, std stdio, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			fmt.Fprintln(std.out, prog, buildVersion())
			fmt.Fprintln(std.out, "commit:", buildCommit())
			fmt.Fprintf(std.out, "go: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
			agents := agentbin.Default()
			for _, arch := range agentbin.Archs() {
				a, err := agents.Find(arch)
				if err != nil {
					fmt.Fprintf(std.out, "agent linux/%s: none (%v)\n", arch, err)
					continue
				}
				fmt.Fprintf(std.out, "agent linux/%s: sha256 %s (%s)\n", arch, a.SHA256, a.From)
			}
			return nil
		}}
}

// buildVersion is the version set by the build, else the module's version that Go
// stamped (`go install …@v1.2.3` gives 1.2.3), else "dev".
func buildVersion() string {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(version, bi)
}

func versionOf(set string, bi *debug.BuildInfo) string {
	if set != "dev" || bi == nil || bi.Main.Version == "" || bi.Main.Version == "(devel)" {
		return set
	}
	return strings.TrimPrefix(bi.Main.Version, "v")
}

// buildCommit is the commit this binary was built from, or "unknown".
func buildCommit() string {
	if commit != "" {
		return commit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, modified := "", ""
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = " (modified)"
				}
			}
		}
		if rev != "" {
			return rev + modified
		}
	}
	return "unknown"
}
