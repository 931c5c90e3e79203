package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime"
)

// ThisHost is the Host this program runs on. It reads files only: starting programs is
// sbx's and shell's business alone.
func ThisHost() Host {
	return Host{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, MacOSVersion: macOSVersion, KVM: kvmAccess, Hypervisor: hypervisorUnknown, Env: os.LookupEnv}
}

// systemVersion is where macOS keeps its product version (what sw_vers prints).
const systemVersion = "/System/Library/CoreServices/SystemVersion.plist"

var productVersionRE = regexp.MustCompile(`<key>ProductVersion</key>\s*<string>([0-9.]+)</string>`)

func macOSVersion(context.Context) (string, error) {
	b, err := os.ReadFile(systemVersion)
	if err != nil {
		return "", err
	}
	m := productVersionRE.FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("no ProductVersion in %s", systemVersion)
	}
	return string(m[1]), nil
}

// hypervisorUnknown: without starting a program (PowerShell) Windows does not say
// whether its Hypervisor Platform is on; sbx diagnose's Virtualization check does.
func hypervisorUnknown(context.Context) (bool, error) {
	return false, errors.New("sbx diagnose reports no Virtualization check, and Windows says so only to PowerShell")
}
